//go:build linux

package faultfs

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/offmain/offmain/reliability/internal/fusemount"
)

// server is the helper's side of an [FS]: the loopback and its faults.
type server struct {
	mnt     *fusemount.Mount
	notify  func(event string, arg any)
	closing chan struct{} // closed by Unmount: releases every hang
	release func()        // closes closing, once

	mu    sync.Mutex // protects rules
	rules []*rule    // in the order set
}

// rule is one fault set by [FS.Fail] or [FS.Hang].
type rule struct {
	id    uint64
	op    Op
	match *matchSpec    // nil for every path
	errno syscall.Errno // the failure, or 0 for a hang
	hang  *hang         // the hang, or nil for a failure
}

// hang is the helper's side of a [Hang].
type hang struct {
	blockedOnce sync.Once     // tells the parent of the first blocked operation
	released    chan struct{} // closed by the parent's Release
}

func (r *rule) matches(op Op, paths []string) bool {
	if r.op != op {
		return false
	}
	return r.match == nil || slices.ContainsFunc(paths, r.match.Matches)
}

// serve is the helper's [fusemount.ServeFunc].
func serve(mountpoint, backing string, raw json.RawMessage, notify func(string, any)) (fusemount.Server, error) {
	var c config
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	lb, err := gofs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, fmt.Errorf("faultfs: mount %s: %w", mountpoint, err)
	}
	s := &server{notify: notify, closing: make(chan struct{})}
	s.release = sync.OnceFunc(func() { close(s.closing) })
	root := &node{LoopbackNode: lb.(*gofs.LoopbackNode), fsys: s}
	root.RootData.RootNode = root
	// No caching (fusemount.Options): every lookup and stat reaches the
	// backing directory, so that a test may change it directly.
	opts := fusemount.Options("faultfs", backing)
	opts.EnableLocks = c.Locks
	// Passthrough would let the kernel write the backing files itself,
	// behind the faults; file.PassthroughFd declines it too.
	opts.DisabledCapabilities = fuse.CAP_PASSTHROUGH
	if s.mnt, err = fusemount.Serve(mountpoint, root, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// Call sets and clears faults for the parent's [FS].
func (s *server) Call(method string, raw json.RawMessage) (any, error) {
	switch method {
	case "fail", "hang":
		var a ruleArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, err
		}
		r := &rule{id: a.ID, op: a.Op, match: a.Match, errno: a.Errno}
		if a.Hang {
			r.hang = &hang{released: make(chan struct{})}
		}
		s.mu.Lock()
		s.rules = append(s.rules, r)
		s.mu.Unlock()
		return nil, nil
	case "clear", "release":
		var a idArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.rules = slices.DeleteFunc(s.rules, func(r *rule) bool {
			if r.id == a.ID && r.hang != nil {
				close(r.hang.released)
			}
			return r.id == a.ID
		})
		return nil, nil
	}
	return nil, fmt.Errorf("faultfs: no method %q", method)
}

// Unmount releases every hang and unmounts.
func (s *server) Unmount() error {
	s.release()
	return s.mnt.Unmount()
}

// wait blocks until the hang of r is released, the mount is closing or
// ctx (the FUSE request, cancelled by the kernel's FUSE_INTERRUPT) is
// done. The first operation it blocks is told to the parent.
func (s *server) wait(ctx context.Context, r *rule) syscall.Errno {
	r.hang.blockedOnce.Do(func() { s.notify("blocked", idArgs{ID: r.id}) })
	select {
	case <-r.hang.released:
		return 0
	case <-s.closing:
		return 0
	case <-ctx.Done():
		return syscall.EINTR
	}
}

// inject applies the faults for op on paths: it waits out every hang that
// selects them, then returns the errno of the last failure that selects
// them, or 0 to let the operation through.
func (s *server) inject(ctx context.Context, op Op, paths ...string) syscall.Errno {
	for _, r := range s.selecting(op, paths) {
		if r.hang == nil {
			continue
		}
		if errno := s.wait(ctx, r); errno != 0 {
			return errno
		}
	}
	var errno syscall.Errno
	for _, r := range s.selecting(op, paths) { // anew: a hang may have outlasted a failure
		if r.hang == nil {
			errno = r.errno
		}
	}
	return errno
}

// selecting returns the rules for op that select one of paths, oldest
// first.
func (s *server) selecting(op Op, paths []string) []*rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(s.rules), func(r *rule) bool { return !r.matches(op, paths) })
}
