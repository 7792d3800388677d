//go:build !linux

package qos

// runHelper does nothing: only Linux has helper processes (see Main).
func runHelper() {}
