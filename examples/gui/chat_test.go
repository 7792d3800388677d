package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/examples/internal/chatstate"
)

func TestScrollSavesOnceSettled(t *testing.T) {
	c := newChat("general", chatstate.Transcript{Next: 3, Items: []chatstate.Item{{ID: "m0"}, {ID: "m1"}, {ID: "m2"}}}, "", anchors.Anchor{}, false)
	t0 := time.Unix(1000, 0)
	due, _ := c.scrolled(t0, 1) // first layout: at the end, nothing moved
	require.False(t, due, "first layout: got a save due, want none")

	c.list.Position.BeforeEnd, c.list.Position.First, c.list.Position.Offset = true, 1, 7
	due, wake := c.scrolled(t0.Add(10*time.Millisecond), 1)
	assert.False(t, due, "just scrolled: got a save due, want none before it settles")
	assert.Equal(t, t0.Add(10*time.Millisecond+settleDelay), wake, "wake: got/want")

	due, _ = c.scrolled(t0.Add(10*time.Millisecond+settleDelay), 1)
	require.True(t, due, "settled: got no save due")
	assert.Equal(t, anchors.Anchor{Item: "m1", Offset: 7}, c.place, "place: got/want")
	assert.True(t, c.hasPlace, "hasPlace: got false, want true away from the end")

	due, wake = c.scrolled(t0.Add(time.Second), 1)
	assert.False(t, due, "no further scroll: got a save due")
	assert.True(t, wake.IsZero(), "no further scroll: got a wake at %v, want none", wake)
}

func TestFollowingIsNoScroll(t *testing.T) {
	c := newChat("general", chatstate.Transcript{}, "", anchors.Anchor{}, false)
	t0 := time.Unix(1000, 0)
	c.scrolled(t0, 1)
	c.add("agent", "a line")
	due, wake := c.scrolled(t0.Add(time.Second), 1) // still at the end
	assert.False(t, due, "following new items: got a save due, want none")
	assert.True(t, wake.IsZero(), "following new items: got a wake, want none")
}

func TestRestorePutsTheListAtThePlace(t *testing.T) {
	items := []chatstate.Item{{ID: "m4"}, {ID: "m5"}, {ID: "m6"}}
	c := newChat("general", chatstate.Transcript{Next: 7, Items: items}, "draft", anchors.Anchor{Item: "m5", Offset: 4}, true)
	c.restore(1.5)
	assert.Equal(t, 1, c.list.Position.First, "First: got/want")
	assert.Equal(t, 6, c.list.Position.Offset, "Offset (4 dp at 1.5 px/dp): got/want")
	assert.True(t, c.list.Position.BeforeEnd, "BeforeEnd: got false, want true")
	assert.Equal(t, "draft", c.editor.Text(), "the draft in the editor: got/want")
}

func TestInboxDropsPostsAfterClose(t *testing.T) {
	woken := 0
	b := &inbox{wake: func() { woken++ }}
	b.post(noteMsg("a"))
	b.post(noteMsg("b"))
	assert.Equal(t, 1, woken, "wakes for two posts before a take: got/want")
	assert.Equal(t, []any{noteMsg("a"), noteMsg("b")}, b.take(), "taken: got/want")
	b.close()
	b.post(noteMsg("c"))
	assert.Empty(t, b.take(), "taken after close: got/want none")
	assert.Equal(t, 1, woken, "wakes after close: got/want")
}
