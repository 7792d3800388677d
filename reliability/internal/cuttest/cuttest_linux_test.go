package cuttest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLeftover(t *testing.T) {
	left := Leftover("drafts.json")
	for name, want := range map[string]bool{
		".drafts.json123":     true,
		"drafts.json":         false,
		".drafts.json":        false,
		".drafts.jsonx1":      false,
		".anchors.json123":    false,
		"drafts.json.corrupt": false,
	} {
		assert.Equal(t, want, left(name), "Leftover(%q): got, want", name)
	}
}
