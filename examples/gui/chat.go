package main

import (
	"strconv"
	"time"

	"gioui.org/layout"
	"gioui.org/widget"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/examples/internal/chatstate"
)

// settleDelay is how long a scroll must rest before its place is saved, as
// in the composer: a wheel spin or a drag sends one place, not dozens.
const settleDelay = 150 * time.Millisecond

// chat is one conversation: its transcript in a list and its composer. It
// lives on the UI goroutine.
type chat struct {
	id     string
	editor widget.Editor
	list   widget.List
	items  []chatstate.Item
	next   int // number of the next item's ID

	// place is where the last settled scroll left the view; the list opens
	// there until it has been laid out once.
	place    anchors.Anchor
	hasPlace bool
	laidOut  bool // the list has been laid out at least once

	shown   anchors.Anchor // what the last frame showed at its top
	atEnd   bool           // the last frame showed the end (the list follows)
	movedAt time.Time      // when the person last scrolled; zero: nothing to save
}

func newChat(id string, t chatstate.Transcript, draft string, place anchors.Anchor, hasPlace bool) *chat {
	c := &chat{id: id, items: t.Items, next: t.Next, place: place, hasPlace: hasPlace}
	// Enter sends and shift+enter is a new line, both read by the app in
	// typing order (typing.go), not by the editor's Submit.
	c.editor.SetText(draft)
	c.editor.SetCaret(c.editor.Len(), c.editor.Len())
	c.list.Axis = layout.Vertical
	c.list.ScrollToEnd = true // follow new items while at the end
	return c
}

// add appends an item, dropping the oldest beyond chatstate.MaxItems. A view that is
// not at the end keeps showing the same item.
func (c *chat) add(from, text string) {
	c.items = append(c.items, chatstate.Item{ID: "m" + strconv.Itoa(c.next), From: from, Text: text, At: time.Now()})
	c.next++
	if over := len(c.items) - chatstate.MaxItems; over > 0 {
		c.items = append(c.items[:0], c.items[over:]...)
		c.list.Position.First = max(c.list.Position.First-over, 0)
	}
}

// restore puts the list at the saved place before its first layout; an item
// no longer kept leaves the list at the end.
func (c *chat) restore(pxPerDp float32) {
	if !c.hasPlace {
		return
	}
	for i, it := range c.items {
		if it.ID == c.place.Item {
			c.list.Position = layout.Position{BeforeEnd: true, First: i, Offset: int(float32(c.place.Offset) * pxPerDp)}
			return
		}
	}
}

// placeNow returns the place the list shows, its offset in dp so that it
// survives a change of scale.
func (c *chat) placeNow(pxPerDp float32) anchors.Anchor {
	p := c.list.Position
	if len(c.items) == 0 || p.First >= len(c.items) {
		return anchors.Anchor{}
	}
	return anchors.Anchor{Item: c.items[p.First].ID, Offset: float64(float32(p.Offset) / pxPerDp)}
}

// scrolled compares the list after a layout with the last frame and reports
// whether a settled scroll is due now: the view moved and then rested for
// settleDelay. A view that stays at the end while items arrive did not
// scroll. wake is when to look again (zero: no need).
func (c *chat) scrolled(now time.Time, pxPerDp float32) (due bool, wake time.Time) {
	shown := c.placeNow(pxPerDp)
	atEnd := !c.list.Position.BeforeEnd
	if !c.laidOut {
		c.laidOut, c.shown, c.atEnd = true, shown, atEnd
		return false, time.Time{}
	}
	if shown != c.shown && !(atEnd && c.atEnd) {
		c.movedAt = now
	}
	c.shown, c.atEnd = shown, atEnd
	if c.movedAt.IsZero() {
		return false, time.Time{}
	}
	if at := c.movedAt.Add(settleDelay); now.Before(at) {
		return false, at
	}
	c.movedAt = time.Time{}
	c.place, c.hasPlace = shown, !atEnd
	return true, time.Time{}
}
