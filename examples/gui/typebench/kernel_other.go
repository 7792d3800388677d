//go:build !linux

package main

// preemptModel is read on Linux only, where typebench runs.
func preemptModel() string { return "unknown" }
