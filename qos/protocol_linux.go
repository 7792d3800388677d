//go:build linux

package qos

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// What the app and the holder say to each other on their socket: the spec
// of the command, one JSON line; the holder's answer, one JSON line; the
// app's ack, one byte.

// helperSpec is what the app sends the holder, on the socket, about the
// command to start.
type helperSpec struct {
	Path       string
	Args       []string
	Env        []string
	Dir        string
	Extra      int // the command's ExtraFiles: fds 3 to 3+Extra-1
	Tier       Tier
	Mode       Mode
	Cgroup     string // Group.Cgroup
	Foreground bool   // give the command's group the terminal Ctty
	Ctty       int
	Pdeathsig  syscall.Signal // the command's own, sent to it when the app is gone
	KillAfter  time.Duration  // how long it then has, with its tree, before SIGKILL
	Ptrace     bool           // a child may call PTRACE_TRACEME (the app's answer)
	// Session: the keeper leads a new session, whose autogroup gets the
	// tier's nice value before the command starts. AppAutogroup is the
	// app's own, never written.
	Session      bool
	AppAutogroup string
}

// helperStatus is what the holder answers once the command started, or
// could not.
type helperStatus struct {
	Holder     int          // the holder's pid
	Agent      int          // the command's pid
	AgentStart uint64       // and its start time
	Cgroup     string       // the command's own cgroup, if Group.Cgroup was given
	Steps      []stepStatus // steps that failed (the command runs)
	Err        string       // why the command did not start
	Op, Path   string       // the *fs.PathError underneath Err, if any
	Errno      int          // the errno underneath Err, if any
	// Leaf is the tier's leaf cgroup, if the start got that far, and
	// Lever why it could not get the I/O lever, whether or not the
	// command started: the failure is the leaf's (Group.tellLever).
	Leaf  string
	Lever *stepStatus
}

// stepStatus is a failed step, for a stepError in the app.
type stepStatus struct {
	Step  string
	Err   string
	Errno int
}

func stepOf(err error) stepStatus {
	s := stepStatus{Step: "step", Err: err.Error()}
	var se *stepError
	if errors.As(err, &se) {
		s.Step, s.Err = se.step, se.err.Error()
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s.Errno = int(errno)
	}
	return s
}

func (s stepStatus) err() error { return &helperError{msg: s.Err, errno: syscall.Errno(s.Errno)} }

// leverOf is how the holder sends err, the I/O lever's failure, or nil.
func leverOf(err error) *stepStatus {
	if err == nil {
		return nil
	}
	s := stepOf(err)
	return &s
}

// lever is the I/O lever's failure the holder sent, as a *leverError, or nil.
func (s helperStatus) lever() error {
	if s.Lever == nil {
		return nil
	}
	return &leverError{s.Lever.err()}
}

// statusOf words err, the command's start's, for the app.
func statusOf(err error) helperStatus {
	s := helperStatus{Err: err.Error()}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		s.Op, s.Path = pe.Op, pe.Path
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s.Errno = int(errno)
	}
	return s
}

// err rebuilds the error the holder sent: where the command's start failed
// as os/exec's does (fork/exec <path>, chdir <dir>), the same
// *fs.PathError, so that errors.Is and errors.As work as for cmd.Start.
func (s helperStatus) err() error {
	if s.Err == "" {
		return nil
	}
	if s.Op != "" && s.Errno != 0 {
		return &fs.PathError{Op: s.Op, Path: s.Path, Err: syscall.Errno(s.Errno)}
	}
	return &helperError{msg: s.Err, errno: syscall.Errno(s.Errno)}
}

// helperError is a failure the holder reported, other than the exec's.
type helperError struct {
	msg   string
	errno syscall.Errno
}

func (e *helperError) Error() string { return e.msg }

func (e *helperError) Unwrap() error {
	if e.errno == 0 {
		return nil
	}
	return e.errno
}

// sendJSON writes v as one line on fd.
func sendJSON(fd int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// recvJSON reads one line from fd into v, a byte at a time so that nothing
// after the line is taken from the socket.
func recvJSON(fd int, v any) error {
	var line []byte
	var c [1]byte
	for {
		n, err := unix.Read(fd, c[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("qos: helper socket closed after %d bytes", len(line))
		}
		if c[0] == '\n' {
			return json.Unmarshal(line, v)
		}
		line = append(line, c[0])
	}
}
