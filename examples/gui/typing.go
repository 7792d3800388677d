package main

import (
	"unicode"

	"gioui.org/io/event"
	"gioui.org/io/key"
	"gioui.org/widget"
)

// Typing, and why it is put in place after the editor has taken the
// frame's keys.
//
// Gio's X11 driver turns a printable key into a key.EditEvent whose range
// is the caret the driver last saw (callbacks.EditorInsert in
// app/window.go), and it learns the editor's caret only when a frame ends
// (Window.updateState, called from processFrame). It reads every X event
// pending before it hands out a frame (x11EventHandler.handleEvents,
// app/os_x11.go), so when keys come faster than frames, every letter of a
// frame is ranged from the caret the last frame left. A tab is not text to
// Gio (xkb.DispatchKey reports only printable runes,
// app/internal/xkb/xkb_unix.go): it arrives as a key.Event, which the app
// reads through its own key.Filter, apart from the editor's events; so the
// letters typed after a tab in the same frame are ranged as if there were
// no tab. Inserted at once, before the editor had applied the letters typed
// before it, the tab went in front of them, and the caret they left stood
// before the tab; inserted after them, it went after the letters typed
// after it. Both were seen ("world memosecond tab\t"). Enter is the same
// kind of key: the editor's Submit cleared the text at it, and the letters
// ranged before it then moved. After a chat switch the letters that follow
// it are ranged from the caret of the composer left, which in the new one
// is anywhere.
//
// So the frame's strokes are read in order, the editor applies its events,
// and then the run of runes the printable presses typed is put at the
// caret the frame began with, each tab and newline where it was pressed
// among them, each enter sending what stood before it: in the coordinates
// the driver ranged every letter of the frame in. The printable presses are
// read through filters that name them without ctrl, alt or super;
// widget.Editor filters none of those (it takes text from EditEvents), so
// nothing is taken from it. The run is checked against the text the editor
// inserted, rune by rune against the keys' names; where they do not agree
// (a key without a name such as é, an input method, a deletion in the same
// frame) nothing is moved, tabs and newlines go at the caret and enter
// sends the whole text, as they would without any of this.

// typedNames are the key names Gio's xkb mapping gives printable ASCII
// keys (convertKeysym, app/internal/xkb/xkb_unix.go): letters as capitals,
// digits and symbols as themselves, the space bar as key.NameSpace.
var typedNames = func() []key.Name {
	names := []key.Name{key.NameSpace}
	for r := '!'; r <= '~'; r++ {
		if 'a' <= r && r <= 'z' {
			continue // reported as 'A'..'Z'
		}
		names = append(names, key.Name(string(r)))
	}
	return names
}()

// keyFilters are the app's keys: the chat switches, the agent toggle, the
// keys whose effect the app makes itself in typing order (the tab, a focus
// key in Gio that only a filter naming it gets, and enter and shift+enter,
// which the editor would otherwise take apart from the driver's text), and
// every printable press, counted. They name no focus, so a press that
// follows a chat switch in the same frame is read too.
var keyFilters = func() []event.Filter {
	fs := []event.Filter{
		key.Filter{Name: key.NameTab},
		key.Filter{Name: key.NameTab, Required: key.ModCtrl, Optional: key.ModShift},
		key.Filter{Name: "G", Required: key.ModCtrl},
		key.Filter{Name: key.NameReturn, Optional: key.ModShift},
		key.Filter{Name: key.NameEnter, Optional: key.ModShift},
	}
	for _, n := range typedNames {
		fs = append(fs, key.Filter{Name: n, Optional: key.ModShift})
	}
	return fs
}()

// A stroke is one press read for a composer: a printable key, whose rune
// the editor inserts from the driver's EditEvent, or a key whose effect
// the app makes itself: a tab or a newline (shift+enter) as text, or enter,
// which sends.
type stroke struct {
	name key.Name // a printable key's name; "" for the others
	text rune     // '\t' or '\n'; 0 for the others
	send bool     // enter
}

// strokeOf returns the stroke of a press the app's filters read.
func strokeOf(e key.Event) stroke {
	switch {
	case e.Name == key.NameTab:
		return stroke{text: '\t'}
	case (e.Name == key.NameReturn || e.Name == key.NameEnter) && e.Modifiers.Contain(key.ModShift):
		return stroke{text: '\n'}
	case e.Name == key.NameReturn || e.Name == key.NameEnter:
		return stroke{send: true}
	}
	return stroke{name: e.Name}
}

// typing is what one composer was typed in one frame, in order, and the
// editor's text and caret before it applied the frame's events (taken only
// in frames with strokes).
type typing struct {
	strokes []stroke
	own     int    // strokes whose effect is the app's (not printable)
	taken   bool   // before and caret hold the snapshot
	before  []rune // the text before the frame's events
	caret   int    // the caret then; -1 if it was a selection
}

func (t *typing) press(s stroke) {
	if s.name == "" {
		t.own++
	}
	t.strokes = append(t.strokes, s)
}

// snapshot notes ed's text and caret before it applies the frame's events.
func (t *typing) snapshot(ed *widget.Editor) {
	if len(t.strokes) == 0 {
		return
	}
	t.taken = true
	t.before = []rune(ed.Text())
	start, end := ed.Selection()
	t.caret = start
	if start != end {
		t.caret = -1
	}
}

// place puts the frame's typing where it was typed, in ed, which has
// applied the frame's events, and returns the texts that enter sent, in
// order: the run of runes the printable presses typed goes at the caret
// the frame began with (where the driver ranged it from a stale caret, as
// after a chat switch, it went elsewhere), with each tab and newline where
// it was pressed among them, and each enter sends what stood before it.
// Where the editor's text is not the text before with exactly those runes
// inserted, nothing is moved, tabs and newlines go at the caret and enter
// sends the whole text. changed reports whether it changed ed.
func (t *typing) place(ed *widget.Editor) (sent []string, changed bool) {
	if !t.taken {
		return nil, false
	}
	after := []rune(ed.Text())
	var typed []key.Name
	for _, s := range t.strokes {
		if s.name != "" {
			typed = append(typed, s.name)
		}
	}
	p, ok := typedRun(typed, t.before, after, t.caret)
	n := len(typed)
	switch {
	case ok && p == t.caret && t.own == 0:
		return nil, false // typed where it belongs: the common case
	case ok:
		sent, text, caret := t.replay(after[p : p+n])
		if len(sent) == 0 {
			// Take the run out, then put it, with the app's strokes, at
			// the caret: the editor's history keeps the rest.
			ed.SetCaret(p, p+n)
			ed.Insert("")
			rt := []rune(text)
			ed.SetCaret(t.caret, t.caret)
			ed.Insert(string(rt[t.caret : len(rt)-(len(t.before)-t.caret)]))
			return nil, true
		}
		ed.SetText(text)
		ed.SetCaret(caret, caret)
		return sent, true
	case t.own == 0:
		return nil, false
	}
	for _, s := range t.strokes { // the best that is known
		switch {
		case s.text != 0:
			ed.Insert(string(s.text))
		case s.send:
			sent = append(sent, ed.Text())
			ed.SetText("")
		}
	}
	return sent, true
}

// replay returns what the strokes make of the text before, with run the
// runes the printable ones typed: the texts each enter sent, and the text
// and caret after the last stroke.
func (t *typing) replay(run []rune) (sent []string, text string, caret int) {
	cur := append([]rune(nil), t.before[:t.caret]...)
	rest := t.before[t.caret:]
	i := 0
	for _, s := range t.strokes {
		switch {
		case s.name != "":
			cur = append(cur, run[i])
			i++
		case s.text != 0:
			cur = append(cur, s.text)
		case s.send:
			sent = append(sent, string(cur)+string(rest))
			cur, rest = nil, nil
		}
	}
	return sent, string(cur) + string(rest), len(cur)
}

// typedRun returns where in after the runes typed by the presses typed
// (each press one rune, the rune its key names) were inserted into before,
// preferring caret. ok is false if after is not before with such a run
// inserted, or the caret was a selection.
func typedRun(typed []key.Name, before, after []rune, caret int) (p int, ok bool) {
	n := len(typed)
	if caret < 0 || caret > len(before) || len(after) != len(before)+n {
		return 0, false
	}
	pre := 0 // after[:p] must equal before[:p]
	for pre < len(before) && after[pre] == before[pre] {
		pre++
	}
	suf := 0 // after[p+n:] must equal before[p:]
	for suf < len(before) && after[len(after)-1-suf] == before[len(before)-1-suf] {
		suf++
	}
	matches := func(p int) bool {
		for i, name := range typed {
			if !names(name, after[p+i]) {
				return false
			}
		}
		return true
	}
	lo, hi := len(before)-suf, pre
	if lo <= caret && caret <= hi && matches(caret) {
		return caret, true
	}
	for p := lo; p <= hi; p++ {
		if matches(p) {
			return p, true
		}
	}
	return 0, false
}

// names reports whether a press of the key named name types r.
func names(name key.Name, r rune) bool {
	if name == key.NameSpace {
		return r == ' '
	}
	rs := []rune(string(name))
	return len(rs) == 1 && unicode.ToUpper(r) == rs[0]
}

// frameTyping is one frame's typing, per composer, in the order the
// composers had the focus.
type frameTyping []struct {
	c *chat
	t typing
}

// of returns c's typing in the frame, adding c.
func (f *frameTyping) of(c *chat) *typing {
	for i := range *f {
		if (*f)[i].c == c {
			return &(*f)[i].t
		}
	}
	*f = append(*f, struct {
		c *chat
		t typing
	}{c: c})
	return &(*f)[len(*f)-1].t
}
