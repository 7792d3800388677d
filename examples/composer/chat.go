package main

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/viewport"
	"github.com/charmbracelet/x/ansi"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/examples/internal/chatstate"
)

// composerHeight is the composer's height in lines.
const composerHeight = 3

// chat is one conversation: its transcript in a viewport and its composer.
// It lives on the UI loop.
type chat struct {
	id    string
	input textarea.Model
	vp    viewport.Model
	items []chatstate.Item
	next  int // number of the next item's ID

	width  int   // the transcript's width the lines below were wrapped to; 0: not laid out
	starts []int // starts[i] is items[i]'s first line in the viewport's content

	// follow keeps the view at the bottom as items arrive. It is true until
	// the person scrolls away from the bottom, and again once they scroll
	// back to it.
	follow bool
	// place is where the view is, as an item and the lines into it; it keeps
	// the view on the same item when items arrive or old ones go.
	place    anchors.Anchor
	hasPlace bool

	scrollGen int // counts scrolls; a settle message for an older one is stale
}

func newChat(id string, t chatstate.Transcript, draft string, place anchors.Anchor, hasPlace bool) *chat {
	in := textarea.New()
	in.Placeholder = "Message #" + id + "  (enter sends, /agent [cmd] runs an agent)"
	in.ShowLineNumbers = false
	in.CharLimit = 0
	in.SetHeight(composerHeight)
	in.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	in.SetValue(draft)
	c := &chat{
		id:       id,
		input:    in,
		vp:       viewport.New(0, 0),
		items:    t.Items,
		next:     t.Next,
		follow:   !hasPlace,
		place:    place,
		hasPlace: hasPlace,
	}
	c.vp.MouseWheelEnabled = true
	return c
}

// add appends an item, dropping the oldest beyond chatstate.MaxItems, and lays the
// transcript out again.
func (c *chat) add(from, text string) {
	c.items = append(c.items, chatstate.Item{ID: "m" + strconv.Itoa(c.next), From: from, Text: text, At: time.Now()})
	c.next++
	if over := len(c.items) - chatstate.MaxItems; over > 0 {
		c.items = append(c.items[:0], c.items[over:]...)
	}
	c.layout(c.width, c.vp.Height)
}

// layout wraps the transcript to width and height and puts the view back at
// its place (or at the bottom while following).
func (c *chat) layout(width, height int) {
	if width <= 0 || height <= 0 {
		return
	}
	c.width = width
	c.vp.Width, c.vp.Height = width, height
	c.input.SetWidth(width)
	var b strings.Builder
	c.starts = c.starts[:0]
	line := 0
	for i, it := range c.items {
		if i > 0 {
			b.WriteByte('\n')
		}
		w := ansi.Wrap(it.From+": "+it.Text, width, " ")
		c.starts = append(c.starts, line)
		line += strings.Count(w, "\n") + 1
		b.WriteString(w)
	}
	c.vp.SetContent(b.String())
	c.restore()
}

// restore moves the view to its place.
func (c *chat) restore() {
	if c.follow || !c.hasPlace {
		c.vp.GotoBottom()
		return
	}
	c.vp.SetYOffset(c.lineOf(c.place))
}

// lineOf returns the content line of place; an item no longer kept means
// the top.
func (c *chat) lineOf(place anchors.Anchor) int {
	for i, it := range c.items {
		if it.ID != place.Item {
			continue
		}
		end := c.vp.TotalLineCount()
		if i+1 < len(c.starts) {
			end = c.starts[i+1]
		}
		return min(c.starts[i]+max(int(place.Offset), 0), max(end-1, c.starts[i]))
	}
	return 0
}

// placeAt returns the place of content line y.
func (c *chat) placeAt(y int) (anchors.Anchor, bool) {
	if len(c.items) == 0 || len(c.starts) != len(c.items) {
		return anchors.Anchor{}, false
	}
	i := sort.Search(len(c.starts), func(i int) bool { return c.starts[i] > y }) - 1
	i = max(i, 0)
	return anchors.Anchor{Item: c.items[i].ID, Offset: float64(y - c.starts[i])}, true
}

// scrolled records the place after the person scrolled; it reports whether
// the view moved.
func (c *chat) scrolled(before int) bool {
	if c.vp.YOffset == before {
		return false
	}
	c.follow = c.vp.AtBottom()
	c.place, c.hasPlace = c.placeAt(c.vp.YOffset)
	c.scrollGen++
	return true
}
