//go:build !cgo

// Package cgocrash crashes the process in C code, for the qos tests of what
// happens to a Group's commands when the app dies that way.
package cgocrash

// Available is false: the package was built without cgo, so it has no C
// code to crash in.
const Available = false

// Crash panics: without cgo there is no C code to crash in.
func Crash() { panic("cgocrash: built without cgo") }
