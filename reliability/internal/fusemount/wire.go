//go:build linux

package fusemount

import (
	"encoding/json"
	"errors"
	"syscall"
)

// message is one line of the protocol between a [Process] and its helper:
// newline-separated JSON (encoding/json's Encoder ends each value with a
// newline) on the helper's standard input (calls) and standard output
// (replies and events).
type message struct {
	ID     uint64          `json:"id,omitempty"`     // a call and its reply share it; 0 for an event
	Method string          `json:"method,omitempty"` // a call's method
	Event  string          `json:"event,omitempty"`  // an event's name
	Args   json.RawMessage `json:"args,omitempty"`   // a call's arguments, a reply's result, an event's argument
	Err    *wireError      `json:"err,omitempty"`    // a reply's error
}

// wireError is an error sent across: its text, and the errno it wraps, so
// that errors.Is(err, syscall.EPERM) still holds on the other side.
type wireError struct {
	Msg   string        `json:"msg"`
	Errno syscall.Errno `json:"errno,omitempty"`
}

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Msg: err.Error()}
	errors.As(err, &w.Errno)
	return w
}

// remoteError is a helper's error, as the parent sees it.
type remoteError struct {
	msg   string
	errno syscall.Errno
}

func (w *wireError) err() error { return &remoteError{msg: w.Msg, errno: w.Errno} }

func (e *remoteError) Error() string { return e.msg }

// Unwrap returns the errno the helper's error wrapped, if any.
func (e *remoteError) Unwrap() error {
	if e.errno == 0 {
		return nil
	}
	return e.errno
}

// mountArgs are the arguments of the first call, "mount".
type mountArgs struct {
	Dir     string          `json:"dir"`
	Backing string          `json:"backing"`
	Config  json.RawMessage `json:"config,omitempty"`
}

// The methods every helper answers itself, before its [Server] sees any.
const (
	methodMount   = "mount"
	methodUnmount = "unmount"
	methodStacks  = "stacks"
)

// The environment of a helper process: the kind of filesystem it serves,
// and the pid of the process that started it.
const (
	envKind   = "OFFMAIN_FUSEMOUNT_HELPER"
	envParent = "OFFMAIN_FUSEMOUNT_PARENT"
)
