package main

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"gioui.org/font/gofont"
	"gioui.org/io/key"
	"gioui.org/layout"
	"gioui.org/op"
	"gioui.org/text"
	"gioui.org/widget"
	"gioui.org/widget/material"

	"github.com/offmain/offmain/examples/internal/agent"
	"github.com/offmain/offmain/examples/internal/chatstate"
)

// ui is the window's model: the chats, which one is shown, the agents'
// tiers and the status note. It lives on the UI goroutine; other goroutines
// reach it only through the app's inbox.
type ui struct {
	app    *app
	th     *material.Theme
	chats  []*chat
	tabs   []widget.Clickable // the chat list
	active int
	focus  bool // the active composer must take the keyboard focus
	tiers  map[string]string
	note   string

	bg sync.WaitGroup // agent starts, stops and writes; waited for at quit
}

func (a *app) newUI() *ui {
	th := material.NewTheme()
	// The Go fonts only: the same glyphs on every machine, so that a
	// screenshot of one run compares with another's.
	th.Shaper = text.NewShaper(text.NoSystemFonts(), text.WithCollection(gofont.Collection()))
	u := &ui{app: a, th: th, tiers: map[string]string{}, focus: true}
	for _, id := range a.cfg.Chats {
		place, ok := a.state.Saves.Anchor(id)
		u.chats = append(u.chats, newChat(id, a.state.Transcripts.Loaded(id), a.state.Saves.Draft(id), place, ok))
	}
	u.tabs = make([]widget.Clickable, len(u.chats))
	return u
}

func (u *ui) chat(id string) *chat {
	for _, c := range u.chats {
		if c.id == id {
			return c
		}
	}
	return nil
}

// handle applies a message posted from another goroutine.
func (u *ui) handle(m any) {
	switch m := m.(type) {
	case noteMsg:
		u.note = string(m)
	case agent.Started:
		u.agentStarted(m)
	case agent.Output:
		if c := u.chat(m.Chat); c != nil {
			for _, l := range m.Lines {
				c.add("agent", l)
			}
			u.saveTranscript(c)
		}
	case agent.Exited:
		delete(u.tiers, m.Chat)
		if c := u.chat(m.Chat); c != nil {
			status := "exited"
			if m.Err != nil {
				status = "ended: " + m.Err.Error()
			}
			c.add("app", "agent "+status)
			u.saveTranscript(c)
		}
	}
}

// update takes the frame's input before anything is laid out: chat
// switches, agent toggles, and each composer change, which goes to the
// draft store at once. eventAt is when the frame's event arrived.
//
// Order matters (see "Keys, in order" in the toolkit notes): the composers
// not shown take their events first; then the app's keys are read in the
// order they were pressed, and a chat switch among them takes effect at
// the end of the frame, so the keys pressed after it wait for the next
// one; then the composer that had the focus applies its events, and the
// frame's typing is put where it was typed (typing.go).
func (u *ui) update(gtx layout.Context, eventAt time.Time) {
	if u.focus {
		u.focus = false
		u.show(gtx, u.active) // the first frame: nothing has been typed yet
	}
	for i, c := range u.chats {
		if i != u.active {
			u.applyEdits(gtx, c, eventAt) // a paste's text comes back to the composer that asked for it
		}
	}
	var typed frameTyping
	typed.of(u.chats[u.active])
	for {
		ev, ok := gtx.Event(keyFilters...)
		if !ok {
			break
		}
		if e, ok := ev.(key.Event); ok && e.State == key.Press {
			u.key(gtx, e, &typed)
		}
	}
	for i := range u.tabs {
		if u.tabs[i].Clicked(gtx) {
			u.show(gtx, i)
		}
	}
	for _, ct := range typed {
		ct.t.snapshot(&ct.c.editor)
		u.applyEdits(gtx, ct.c, eventAt)
		sent, changed := ct.t.place(&ct.c.editor)
		for _, text := range sent {
			u.send(ct.c, text)
		}
		if changed {
			u.applyEdits(gtx, ct.c, eventAt)
		}
	}
}

// applyEdits drains c's editor before it is laid out (Editor.Layout would
// consume its events, and the ChangeEvents with them).
func (u *ui) applyEdits(gtx layout.Context, c *chat, eventAt time.Time) {
	for {
		ev, ok := c.editor.Update(gtx)
		if !ok {
			return
		}
		if _, ok := ev.(widget.ChangeEvent); ok {
			handler := time.Now()
			text := c.editor.Text()
			u.saveDraft(c, text)
			u.app.probe.changed(c.id, len(text), eventAt, handler, time.Now())
		}
	}
}

func (u *ui) key(gtx layout.Context, e key.Event, typed *frameTyping) {
	switch {
	case e.Name == key.NameTab && e.Modifiers.Contain(key.ModCtrl|key.ModShift):
		u.switchTo(gtx, (u.active+len(u.chats)-1)%len(u.chats), typed)
	case e.Name == key.NameTab && e.Modifiers.Contain(key.ModCtrl):
		u.switchTo(gtx, (u.active+1)%len(u.chats), typed)
	case e.Name == "G" && e.Modifiers.Contain(key.ModCtrl):
		c := u.chats[u.active]
		if u.app.agents.Get(c.id) != nil {
			u.stopAgent(c)
		} else {
			u.startAgent(c, "")
		}
	default: // a printable key, or one whose effect is the app's: tab, enter
		typed.of(u.chats[u.active]).press(strokeOf(e))
	}
}

// switchTo shows chat i. Should Gio have moved the focus at once (see
// show), the keys read after the switch in this frame are the new
// composer's.
func (u *ui) switchTo(gtx layout.Context, i int, typed *frameTyping) {
	u.show(gtx, i)
	if gtx.Focused(&u.chats[i].editor) {
		typed.of(u.chats[i])
	}
}

// show makes chat i the active one and moves the keyboard focus to its
// composer. Every composer not shown has taken its events by now (see
// update), so Gio's router defers the FocusCmd to the end of the frame
// and freezes the events queued after it: they are routed again, to the
// new focus, at the next frame (Router.execute and Router.Frame in
// io/input/router.go). So the keys typed before the switch stay with the
// composer focused before, and a paste or a key pressed right after it
// reaches the new one. The SelectionCmd, executed after the FocusCmd (which
// clears the router's caret), gives the router the new composer's caret in
// that same step, so the X11 driver ranges the next letters from it.
func (u *ui) show(gtx layout.Context, i int) {
	u.active = i
	ed := &u.chats[i].editor
	gtx.Execute(key.FocusCmd{Tag: ed})
	start, end := ed.Selection()
	gtx.Execute(key.SelectionCmd{Tag: ed, Range: key.Range{Start: start, End: end}})
}

// saveDraft is the keystroke's save: drafts.Store.Set (memory only), or
// with -sync-saves the whole write, here on the UI goroutine.
func (u *ui) saveDraft(c *chat, text string) {
	if err := u.app.state.Saves.SetDraft(c.id, text); err != nil {
		u.note = chatstate.Note("draft not saved", err)
	}
}

func (u *ui) saveTranscript(c *chat) {
	if err := u.app.state.Transcripts.Save(c.id, c.next, c.items); err != nil {
		u.note = chatstate.Note("transcript not saved", err)
	}
}

// scrolled saves the active chat's place once a scroll has settled, and
// asks for a frame when it will have.
func (u *ui) scrolled(gtx layout.Context) {
	c := u.chats[u.active]
	due, wake := c.scrolled(gtx.Now, gtx.Metric.PxPerDp)
	if !wake.IsZero() {
		gtx.Execute(op.InvalidateCmd{At: wake})
	}
	if !due {
		return
	}
	var err error
	if c.hasPlace {
		err = u.app.state.Saves.SetAnchor(c.id, c.place)
	} else {
		err = u.app.state.Saves.ForgetAnchor(c.id) // at the end: the next run follows
	}
	if err != nil {
		u.note = chatstate.Note("scroll place not saved", err)
	}
}

// send handles a text that enter sent from c's composer (see typing.go,
// which has set the composer's text already): a command, or a message that
// joins the transcript and goes to the chat's agent.
func (u *ui) send(c *chat, text string) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return
	case text == "/agent" || strings.HasPrefix(text, "/agent "):
		u.startAgent(c, strings.TrimSpace(strings.TrimPrefix(text, "/agent")))
		return
	case text == "/stop":
		u.stopAgent(c)
		return
	}
	c.add("you", text)
	c.list.Position.BeforeEnd = false // a message sent shows the end
	u.saveTranscript(c)
	if ag := u.app.agents.Get(c.id); ag != nil {
		u.bg.Go(func() {
			if err := ag.Write(text); err != nil {
				u.app.inbox.post(noteMsg(chatstate.Note("agent did not take the line", err)))
			}
		})
	}
}

// startAgent starts c's agent off the UI goroutine: qos.Start forks from a
// lowered thread and may wait on the kernel's autogroup rate limit.
func (u *ui) startAgent(c *chat, command string) {
	what := "the agent"
	if command != "" {
		what = fmt.Sprintf("agent %q", command)
	}
	c.add("app", fmt.Sprintf("starting %s at the Agent tier, qos mode %s", what, u.app.cfg.Mode))
	agents, post, id := u.app.agents, u.app.inbox.post, c.id
	u.bg.Go(func() { post(agents.Start(id, command)) })
}

func (u *ui) stopAgent(c *chat) {
	agents, id := u.app.agents, c.id
	u.bg.Go(func() { agents.Stop(id) })
}

func (u *ui) agentStarted(m agent.Started) {
	c := u.chat(m.Chat)
	if c == nil {
		return
	}
	if m.Err != nil {
		c.add("app", "the agent did not start: "+m.Err.Error())
		return
	}
	if u.app.agents.Get(m.Chat) != nil { // not if it has exited already
		u.tiers[m.Chat] = m.Tier
	}
	c.add("app", fmt.Sprintf("agent pid %d: %s; applied tier: %s", m.PID, m.Desc, m.Tier))
	u.saveTranscript(c)
}
