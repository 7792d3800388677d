// Package xwin is what the desktop examples' end-to-end tests and the gui
// example's typebench use to drive a window as a person and a window
// manager would, on a private X server (StartXvfb): keys through the XTEST
// extension (what xdotool uses, without a process per key), a close
// through WM_DELETE_WINDOW (what a window manager sends when the close
// button is clicked; ICCCM section 4.2.8.1), and the screen read back
// (Screenshot, OCR). It speaks the X protocol in Go (github.com/jezek/xgb),
// so timing a key costs no fork.
package xwin

import (
	"errors"
	"fmt"
	"io"
	"log"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// Conn is one connection to an X server. It is not safe for concurrent use.
type Conn struct {
	c       *xgb.Conn
	root    xproto.Window
	keycode map[xproto.Keysym]xproto.Keycode // unshifted keysyms only
	created int                              // top-level windows seen by Created
}

// Dial connects to display (":N"), which must offer XTEST.
func Dial(display string) (*Conn, error) {
	// xgb logs a missing ~/.Xauthority before it connects without one, as
	// Xvfb allows; errors still come back from NewConnDisplay.
	xgb.Logger = log.New(io.Discard, "", 0)
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, fmt.Errorf("xwin: %s: %w", display, err)
	}
	if err := xtest.Init(c); err != nil {
		c.Close()
		return nil, fmt.Errorf("xwin: %s: XTEST: %w", display, err)
	}
	x := &Conn{c: c, root: xproto.Setup(c).DefaultScreen(c).Root, keycode: map[xproto.Keysym]xproto.Keycode{}}
	if err := x.loadKeymap(); err != nil {
		c.Close()
		return nil, err
	}
	return x, nil
}

// Close closes the connection.
func (x *Conn) Close() { x.c.Close() }

func (x *Conn) loadKeymap() error {
	setup := xproto.Setup(x.c)
	n := byte(setup.MaxKeycode - setup.MinKeycode + 1)
	m, err := xproto.GetKeyboardMapping(x.c, setup.MinKeycode, n).Reply()
	if err != nil {
		return fmt.Errorf("xwin: keyboard mapping: %w", err)
	}
	per := int(m.KeysymsPerKeycode)
	for i := range int(n) {
		if per == 0 {
			break
		}
		sym := m.Keysyms[i*per] // the unshifted keysym
		if _, ok := x.keycode[sym]; !ok && sym != 0 {
			x.keycode[sym] = setup.MinKeycode + xproto.Keycode(i)
		}
	}
	return nil
}

// ErrNoKey is returned for a key the server's keymap has no keycode for
// without a modifier.
var ErrNoKey = errors.New("xwin: no unshifted keycode for this key")

// Keysyms for the keys Key accepts besides printable ASCII; the values are
// from X11/keysymdef.h.
const (
	Return    xproto.Keysym = 0xff0d
	BackSpace xproto.Keysym = 0xff08
)

// Key presses and releases the key whose unshifted keysym is sym (for
// lower-case letters, digits and space, the ASCII code) and returns once the
// server has processed both: a round trip follows the two requests, and the
// server handles a client's requests in order.
func (x *Conn) Key(sym xproto.Keysym) error {
	kc, ok := x.keycode[sym]
	if !ok {
		return fmt.Errorf("%w: keysym %#x", ErrNoKey, sym)
	}
	xtest.FakeInput(x.c, xproto.KeyPress, byte(kc), 0, x.root, 0, 0, 0)
	xtest.FakeInput(x.c, xproto.KeyRelease, byte(kc), 0, x.root, 0, 0, 0)
	return x.Sync()
}

// Sync waits until the server has processed every request sent so far.
func (x *Conn) Sync() error {
	_, err := xproto.GetInputFocus(x.c).Reply()
	return err
}

// Find returns the top-level window whose WM_NAME is title.
func (x *Conn) Find(title string) (xproto.Window, error) {
	tree, err := xproto.QueryTree(x.c, x.root).Reply()
	if err != nil {
		return 0, fmt.Errorf("xwin: %w", err)
	}
	for _, w := range tree.Children {
		p, err := xproto.GetProperty(x.c, false, w, xproto.AtomWmName, xproto.GetPropertyTypeAny, 0, 256).Reply()
		if err == nil && string(p.Value) == title {
			return w, nil
		}
	}
	return 0, fmt.Errorf("xwin: no window named %q", title)
}

// CloseWindow asks w to close as a window manager does: a ClientMessage of
// type WM_PROTOCOLS carrying WM_DELETE_WINDOW.
func (x *Conn) CloseWindow(w xproto.Window) error {
	protocols, err := x.atom("WM_PROTOCOLS")
	if err != nil {
		return err
	}
	del, err := x.atom("WM_DELETE_WINDOW")
	if err != nil {
		return err
	}
	ev := xproto.ClientMessageEvent{
		Format: 32, Window: w, Type: protocols,
		Data: xproto.ClientMessageDataUnionData32New([]uint32{uint32(del), uint32(xproto.TimeCurrentTime), 0, 0, 0}),
	}
	if err := xproto.SendEventChecked(x.c, false, w, xproto.EventMaskNoEvent, string(ev.Bytes())).Check(); err != nil {
		return fmt.Errorf("xwin: WM_DELETE_WINDOW: %w", err)
	}
	return nil
}

func (x *Conn) atom(name string) (xproto.Atom, error) {
	r, err := xproto.InternAtom(x.c, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0, fmt.Errorf("xwin: atom %s: %w", name, err)
	}
	return r.Atom, nil
}

// WatchCreates makes the server tell this connection of every top-level
// window created from now on (SubstructureNotify on the root window; X
// protocol, CreateNotify); Created counts them.
func (x *Conn) WatchCreates() error {
	err := xproto.ChangeWindowAttributesChecked(x.c, x.root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskSubstructureNotify}).Check()
	if err != nil {
		return fmt.Errorf("xwin: watch the root window: %w", err)
	}
	return nil
}

// Created returns how many top-level windows any client created since
// WatchCreates, every one the server made before this call included: the
// server sends a client its events and replies in order, so the round trip
// of Sync brings in the CreateNotify events that precede it.
func (x *Conn) Created() (int, error) {
	if err := x.Sync(); err != nil {
		return 0, fmt.Errorf("xwin: %w", err)
	}
	for {
		ev, err := x.c.PollForEvent()
		if err != nil {
			return 0, fmt.Errorf("xwin: %w", err)
		}
		if ev == nil {
			return x.created, nil
		}
		if e, ok := ev.(xproto.CreateNotifyEvent); ok && e.Parent == x.root {
			x.created++
		}
	}
}
