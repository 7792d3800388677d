//go:build linux

package powercut

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"

	"github.com/offmain/offmain/reliability/internal/fusemount"
)

// server is the helper's side of an [FS]: the model, the power and the
// trigger.
type server struct {
	backing  string
	opts     Options
	mnt      *fusemount.Mount
	notify   func(event string, arg any)
	uid, gid uint32 // the owner of every file: the helper's, which is the test's

	mu      sync.Mutex // protects the fields below, and every inode of m
	m       *model     // the live power cycle
	lastID  uint64     // the last inode number handed out, across cycles
	rng     *rand.Rand // the draws of each cut
	down    bool       // cut, not powered on yet: every operation fails with EIO
	trigger *armed     // the pending trigger, or nil
	ctr     *counters  // the cuts and counted operations (see Op) so far, shared with the parent
}

// armed is a trigger counting down.
type armed struct {
	id   uint64 // the parent's ID for it, sent back at the cut
	t    Trigger
	left int
}

// The calls of the protocol, their arguments and results.
type (
	armArgs struct {
		ID      uint64  `json:"id"`
		Trigger Trigger `json:"trigger"`
	}
	armResult struct {
		Replaced uint64 `json:"replaced,omitempty"` // the ID of the trigger it replaced before its cut
	}
	cutEvent struct {
		ID uint64 `json:"id"` // the trigger's, or 0 if none was armed
	}
	// config is the helper's configuration.
	config struct {
		Options  Options `json:"options"`
		Counters string  `json:"counters"` // where to map the counters
	}
)

// serve is the helper's [fusemount.ServeFunc].
func serve(mountpoint, backing string, raw json.RawMessage, notify func(string, any)) (fusemount.Server, error) {
	var c config
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	opts := c.Options
	s := &server{backing: backing, opts: opts, notify: notify,
		uid: uint32(os.Getuid()), gid: uint32(os.Getgid())}
	s.rng = rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	var err error
	if s.ctr, err = openCounters(c.Counters); err != nil {
		return nil, err
	}
	if s.m, err = load(backing, 1, &s.lastID); err != nil {
		return nil, err
	}
	// The kernel's caches are off (fusemount.Options): after a cut every
	// name must be looked up again, in the tree that power-on brings back.
	if s.mnt, err = fusemount.Serve(mountpoint, &node{fsys: s}, fusemount.Options("powercut", backing)); err != nil {
		return nil, err
	}
	return s, nil
}

// Call answers the parent's [FS].
func (s *server) Call(method string, raw json.RawMessage) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch method {
	case "arm":
		var a armArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, err
		}
		var r armResult
		if s.trigger != nil {
			r.Replaced = s.trigger.id
		}
		s.trigger = &armed{id: a.ID, t: a.Trigger, left: max(a.Trigger.N, 1)}
		return r, nil
	case "cut":
		s.cutLocked()
		return nil, nil
	case "poweron":
		return nil, s.powerOnLocked()
	}
	return nil, fmt.Errorf("powercut: no method %q", method)
}

// Unmount unmounts.
func (s *server) Unmount() error { return s.mnt.Unmount() }

// powerOnLocked loads the backing directory as the next cycle's disk.
func (s *server) powerOnLocked() error {
	if !s.down {
		return nil
	}
	m, err := load(s.backing, s.m.epoch+1, &s.lastID)
	if err != nil {
		return err
	}
	s.m, s.down = m, false
	return nil
}

// cutLocked cuts the power, with s.mu held. The backing directory is
// rewritten under the lock, so no operation runs between the cut and the
// disk. The cut's event is sent before the operation or call that made it
// is answered.
func (s *server) cutLocked() {
	if s.down {
		return
	}
	img := s.m.cut(s.rng, s.opts.Forget)
	if err := img.write(s.backing); err != nil {
		panic(fmt.Sprintf("powercut: writing the disk %s after a cut: %v", s.backing, err))
	}
	s.down = true
	s.ctr.cuts().Add(1)
	var ev cutEvent
	if s.trigger != nil {
		ev.ID = s.trigger.id
		s.trigger = nil
	}
	s.notify("cut", ev)
}

// before runs before a counted operation, with s.mu held. It returns EIO
// when the power is off, or when a Before trigger cuts it now.
func (s *server) before(op Op) syscall.Errno {
	if s.down {
		return syscall.EIO
	}
	if a := s.trigger; a != nil && a.t.Before && a.counts(op) && a.left == 1 {
		s.cutLocked()
		return syscall.EIO
	}
	return 0
}

// after runs after a counted operation succeeded, with s.mu held: it
// counts it and cuts if an after trigger says so. The operation still
// returns its result: it happened before the power went.
func (s *server) after(op Op) {
	s.ctr.ops().Add(1)
	if a := s.trigger; a != nil && a.counts(op) {
		if a.left--; a.left == 0 {
			s.cutLocked()
		}
	}
}

func (a *armed) counts(op Op) bool { return a.t.Op == 0 || a.t.Op == op }
