package anchors

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// getWait is Get after the file's read has landed, for tests that check
// what the read brought.
func getWait(t *testing.T, s *Store, chat string) (Anchor, bool) {
	t.Helper()
	select {
	case <-s.Loaded():
	case <-t.Context().Done():
		t.Fatal("the file's read did not land")
	}
	return s.Get(chat)
}

// TestGetNeverWaitsForRead: while the file's read does not return (a dead
// network home directory), Get answers at once from memory: false for the
// file's places, the place for a chat set since Open. Loaded closes once the
// read lands, and Load waits for it under its context.
func TestGetNeverWaitsForRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(disk("x"))
		f.Gate = make(chan struct{}) // the read blocks until closed
		s := openFake(t, f, Options{})
		type answer struct {
			a  Anchor
			ok bool
		}
		got := make(chan answer, 2)
		go func() {
			a, ok := s.Get("x")
			got <- answer{a, ok}
			s.Set("mine", at("m"))
			a, ok = s.Get("mine")
			got <- answer{a, ok}
		}()
		synctest.Wait()
		if len(got) < 2 {
			close(f.Gate) // so that the old code fails rather than hangs
			t.Fatal("Get waited for the file's read")
		}
		assert.False(t, (<-got).ok, "Get of a chat only the unread file holds: got a place")
		mine := <-got
		assert.True(t, mine.ok && mine.a.Item == "m", "Get of a chat set since Open: got %+v", mine)
		select {
		case <-s.Loaded():
			t.Fatal("Loaded closed before the read returned")
		default:
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		assert.ErrorIs(t, s.Load(ctx), context.DeadlineExceeded, "Load while the read hangs")
		_, ok := s.Get("x")
		assert.False(t, ok)

		close(f.Gate)
		<-s.Loaded()
		a, ok := s.Get("x")
		assert.True(t, ok && a.Item == "disk-x", "Get after Loaded: got %+v, %t", a, ok)
	})
}
