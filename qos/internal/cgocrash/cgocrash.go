//go:build cgo

// Package cgocrash crashes the process in C code, for the qos tests of what
// happens to a Group's commands when the app dies that way.
package cgocrash

/*
static void crash(void) { *(volatile int *)0 = 0; }
*/
import "C"

// Available is true when the package was built with cgo.
const Available = true

// Crash writes through a null pointer in C: SIGSEGV outside Go code, which
// the Go runtime turns into a fatal error ("signal arrived during cgo
// execution") that ends the process.
func Crash() { C.crash() }
