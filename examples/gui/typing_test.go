package main

import (
	"testing"

	"gioui.org/io/key"
	"gioui.org/widget"
	"github.com/stretchr/testify/assert"
)

// strokesOf turns typed text into the strokes the app reads for it: a tab
// for '\t', shift+enter for '\n', enter for '\r', and a printable key, as
// Gio's xkb mapping names it, for the rest.
func strokesOf(s string) []stroke {
	var ss []stroke
	for _, r := range s {
		switch {
		case r == '\t':
			ss = append(ss, strokeOf(key.Event{Name: key.NameTab}))
		case r == '\n':
			ss = append(ss, strokeOf(key.Event{Name: key.NameReturn, Modifiers: key.ModShift}))
		case r == '\r':
			ss = append(ss, strokeOf(key.Event{Name: key.NameReturn}))
		case r == ' ':
			ss = append(ss, strokeOf(key.Event{Name: key.NameSpace}))
		case 'a' <= r && r <= 'z':
			ss = append(ss, strokeOf(key.Event{Name: key.Name(string(r - 'a' + 'A'))}))
		default:
			ss = append(ss, strokeOf(key.Event{Name: key.Name(string(r))}))
		}
	}
	return ss
}

func printables(s string) []key.Name {
	var ns []key.Name
	for _, st := range strokesOf(s) {
		if st.name != "" {
			ns = append(ns, st.name)
		}
	}
	return ns
}

func TestTypedRun(t *testing.T) {
	for _, tc := range []struct {
		name          string
		typed         string
		before, after string
		caret         int
		want          int
		ok            bool
	}{
		{"at the caret", "second", "world memo\t", "world memo\tsecond", 11, 11, true},
		{"mid-text", "xy", "ab", "axyb", 1, 1, true},
		{"capital, space and symbol", "A !", "", "A !", 0, 0, true},
		{"ranged from another composer's caret", "hi", "abc", "abchi", 1, 3, true},
		{"repeated runes prefer the caret", "a", "aa", "aaa", 1, 1, true},
		{"nothing typed", "", "abc", "abc", 3, 3, true},
		{"a key without a name (é)", "b", "", "éb", 0, 0, false},
		{"a deletion in the frame", "ab", "x", "xa", 1, 0, false},
		{"the wrong rune", "a", "", "q", 0, 0, false},
		{"a selection before", "a", "xy", "a", -1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := typedRun(printables(tc.typed), []rune(tc.before), []rune(tc.after), tc.caret)
			assert.Equal(t, tc.ok, ok, "ok: got/want")
			if tc.ok {
				assert.Equal(t, tc.want, p, "run at: got/want")
			}
		})
	}
}

// typeFrame drives ed as Gio's X11 driver and the app do in one frame: the
// strokes of keys are read, the driver's edits (each printable rune, ranged
// from rangedAt on as if no other key had been pressed) are applied, then
// the typing is placed. It returns what enter sent.
func typeFrame(ed *widget.Editor, keys string, rangedAt int) []string {
	var ty typing
	for _, s := range strokesOf(keys) {
		ty.press(s)
	}
	ty.snapshot(ed)
	i := 0
	for _, r := range keys {
		if r == '\t' || r == '\n' || r == '\r' {
			continue
		}
		at := min(rangedAt+i, ed.Len()) // EditEvent{Range: rangedAt+i}, then SelectionEvent
		ed.SetCaret(at, at)
		ed.Insert(string(r))
		i++
	}
	sent, _ := ty.place(ed)
	return sent
}

func TestPlaceTyping(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		caret      int
		keys       string
		rangedAt   int
		want       string
		wantCaret  int
		wantSent   []string
	}{
		{"letters then a tab", "world mem", 9, "o\t", 9, "world memo\t", 11, nil},
		{"a tab then letters", "world memo", 10, "\tsecond", 10, "world memo\tsecond", 17, nil},
		{"letters around a tab", "world mem", 9, "o\tse", 9, "world memo\tse", 13, nil},
		{"two tabs and a newline", "", 0, "a\t\tb\n!", 0, "a\t\tb\n!", 6, nil},
		{"after a switch: ranged from the other composer's caret", "pasted", 0, "x\ty", 20, "x\typasted", 3, nil},
		{"only letters, where they belong", "ab", 1, "xy", 1, "axyb", 3, nil},
		{"enter sends what came before it", "hello offmai", 12, "n\rworld\tmemo", 12, "world\tmemo", 10, []string{"hello offmain"}},
		{"enter mid-text sends all of it", "ab", 1, "x\r", 1, "", 0, []string{"axb"}},
		{"two enters", "", 0, "a\rb\rc", 0, "c", 1, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ed widget.Editor
			ed.SetText(tc.text)
			ed.SetCaret(tc.caret, tc.caret)
			sent := typeFrame(&ed, tc.keys, tc.rangedAt)
			assert.Equal(t, tc.wantSent, sent, "sent: got/want")
			assert.Equal(t, tc.want, ed.Text(), "text: got/want")
			start, end := ed.Selection()
			assert.Equal(t, [2]int{tc.wantCaret, tc.wantCaret}, [2]int{start, end}, "caret: got/want")
		})
	}
}

// TestPlaceTypingFallback: where the text does not agree with the keys (é
// came from a key Gio gives no name), nothing moves, a tab goes at the
// caret and enter sends the whole text.
func TestPlaceTypingFallback(t *testing.T) {
	var ed widget.Editor
	var ty typing
	for _, s := range strokesOf("\tb\r") {
		ty.press(s)
	}
	ty.snapshot(&ed)
	ed.Insert("éb")
	sent, changed := ty.place(&ed)
	assert.True(t, changed, "changed: got false")
	assert.Equal(t, []string{"éb\t"}, sent, "sent: got/want")
	assert.Equal(t, "", ed.Text(), "text after: got/want")
}
