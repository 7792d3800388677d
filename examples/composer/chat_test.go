package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/examples/internal/chatstate"
)

// TestPlaceRoundTrip checks that every line of a wrapped transcript maps to
// a place (item, lines into it) and back to the same line.
func TestPlaceRoundTrip(t *testing.T) {
	c := newChat("c", chatstate.Transcript{}, "", anchors.Anchor{}, false)
	for i := range 30 {
		c.items = append(c.items, chatstate.Item{ID: "m" + strings.Repeat("x", i), From: "agent", Text: strings.Repeat("word ", i*3)})
	}
	c.layout(40, 10)
	total := c.vp.TotalLineCount()
	require.Greater(t, total, 30, "long items wrap onto several lines")
	for y := range total {
		p, ok := c.placeAt(y)
		require.True(t, ok)
		assert.Equal(t, y, c.lineOf(p), "line %d via %+v", y, p)
	}
}

func TestPlaceOfDroppedItemIsTop(t *testing.T) {
	c := newChat("c", chatstate.Transcript{}, "", anchors.Anchor{Item: "gone", Offset: 3}, true)
	c.add("agent", "one")
	c.layout(40, 10)
	assert.Equal(t, 0, c.lineOf(anchors.Anchor{Item: "gone", Offset: 3}))
	assert.Equal(t, 0, c.vp.YOffset)
}

func TestTranscriptKeepsMaxItems(t *testing.T) {
	c := newChat("c", chatstate.Transcript{}, "", anchors.Anchor{}, false)
	for range chatstate.MaxItems + 5 {
		c.add("agent", "x")
	}
	assert.Len(t, c.items, chatstate.MaxItems)
	assert.Equal(t, "m5", c.items[0].ID, "the oldest went first")
	assert.Equal(t, chatstate.MaxItems+5, c.next)
}
