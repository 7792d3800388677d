// Package keyedtest is a test harness for the keyed stores, drafts and
// anchors (see internal/keyed): the helpers their tests share, so that a
// check both packages make is written once. The fake file they run on is
// internal/fakefile; the fault-injecting filesystems are internal/faultfs
// and internal/powercut.
package keyedtest

import (
	"bytes"
	"context"
	"encoding/json"
	"go/parser"
	"go/token"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/statefile"
)

// NewStatefile returns a statefile.Store with default options, closed (and
// its Close checked) when the test ends.
func NewStatefile(t *testing.T) *statefile.Store {
	t.Helper()
	st := statefile.NewStore(statefile.Options{})
	t.Cleanup(func() { assert.NoError(t, st.Close(context.Background())) })
	return st
}

// Wait moves a testing/synctest bubble's fake clock forward by d (no real
// time passes) and lets the goroutines that woke finish. Call it inside the
// bubble only.
func Wait(d time.Duration) {
	tm := time.NewTimer(d)
	<-tm.C
	synctest.Wait()
}

// DocExample returns the JSON example of the file in the package
// documentation held by file (the first code block that starts with "{"),
// compacted as encoding/json writes it, so that a test can check that a
// store writes, byte for byte, what its documentation shows.
func DocExample(t *testing.T, file string) []byte {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly|parser.ParseComments)
	require.NoError(t, err)
	require.NotNil(t, f.Doc, "%s has no package documentation", file)
	var block []string
	for line := range strings.SplitSeq(f.Doc.Text(), "\n") {
		switch {
		case line == "\t{":
			block = []string{line}
		case block != nil && line == "\t}":
			var out bytes.Buffer
			require.NoError(t, json.Compact(&out, []byte(strings.Join(append(block, line), "\n"))))
			return out.Bytes()
		case block != nil:
			block = append(block, line)
		}
	}
	t.Fatalf("no JSON example in the package documentation of %s", file)
	return nil
}

// Changes records the calls of a store's OnChange. Its methods are safe
// for concurrent use: OnChange runs on statefile's watch goroutine.
type Changes struct {
	mu    sync.Mutex // protects calls
	calls [][]string
}

// Fn is the OnChange to give the store: it records keys.
func (c *Changes) Fn(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, keys)
}

// Take returns the calls recorded so far, oldest first, and forgets them.
func (c *Changes) Take() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	calls := c.calls
	c.calls = nil
	return calls
}

// MustNotBlock runs edit, failing the test if it does not return while the
// disk hangs (a real-time bound: the hang is in the kernel, not in a bubble).
func MustNotBlock(t *testing.T, edit func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		edit()
	}()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	select {
	case <-done:
	case <-timeout.C:
		t.Fatal("Set blocked while the disk hung")
	}
}

// WindowWait bounds each wait of a real-disk test for a change to travel
// from one window to the other. It is real time, as inotify events are:
// statefile reports a change 100 ms after its last event, so 10 s only
// ends a test that is broken, never one that is slow. The waits are on
// channels, never sleeps.
const WindowWait = 10 * time.Second

// Next returns the next value from ch, failing the test (naming what it
// waited for) if none comes within WindowWait.
func Next[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(WindowWait)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("no %s within %v", what, WindowWait)
		panic("unreachable")
	}
}
