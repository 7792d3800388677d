package main

import (
	"fmt"
	"image"
	"image/color"
	"slices"
	"strings"

	"gioui.org/font"
	"gioui.org/layout"
	"gioui.org/op"
	"gioui.org/op/clip"
	"gioui.org/op/paint"
	"gioui.org/unit"
	"gioui.org/widget/material"
)

// Layout sizes, in dp. The end-to-end test finds the transcript and the
// composer by them on a screenshot (scale 1 on Xvfb).
const (
	sidebarWidth   = 180
	composerHeight = 96
	statusHeight   = 28
	headerHeight   = 36
)

var (
	sidebarBg = color.NRGBA{R: 0xee, G: 0xee, B: 0xf2, A: 0xff}
	activeBg  = color.NRGBA{R: 0xc5, G: 0xca, B: 0xe9, A: 0xff}
	faint     = color.NRGBA{R: 0x60, G: 0x60, B: 0x60, A: 0xff}
	rule      = color.NRGBA{R: 0xbb, G: 0xbb, B: 0xbb, A: 0xff}
)

type (
	C = layout.Context
	D = layout.Dimensions
)

// layout draws the window: the chat list on the left; the active chat's
// header, transcript and composer on the right; the status line below.
func (u *ui) layout(gtx C) D {
	return layout.Flex{Axis: layout.Vertical}.Layout(gtx,
		layout.Flexed(1, func(gtx C) D {
			return layout.Flex{}.Layout(gtx,
				layout.Rigid(u.sidebar),
				layout.Flexed(1, u.main),
			)
		}),
		layout.Rigid(u.status),
	)
}

func (u *ui) sidebar(gtx C) D {
	gtx.Constraints = layout.Exact(image.Pt(gtx.Dp(sidebarWidth), gtx.Constraints.Max.Y))
	fill(gtx, sidebarBg)
	var rows []layout.FlexChild
	for i, c := range u.chats {
		rows = append(rows, layout.Rigid(func(gtx C) D {
			return u.tabs[i].Layout(gtx, func(gtx C) D { return u.tab(gtx, i, c) })
		}))
	}
	return layout.Flex{Axis: layout.Vertical}.Layout(gtx, rows...)
}

// tab is one row of the chat list: its name, whether it has a draft, and
// its agent's tier.
func (u *ui) tab(gtx C, i int, c *chat) D {
	gtx.Constraints.Min.X = gtx.Constraints.Max.X
	m := op.Record(gtx.Ops)
	d := layout.UniformInset(unit.Dp(8)).Layout(gtx, func(gtx C) D {
		name := "# " + c.id
		if c.editor.Len() > 0 {
			name += "  (draft)"
		}
		l := material.Body1(u.th, name)
		if i == u.active {
			l.Font.Weight = font.Bold
		}
		rows := []layout.FlexChild{layout.Rigid(l.Layout)}
		if t, ok := u.tiers[c.id]; ok {
			s := material.Caption(u.th, "agent: "+t)
			s.Color = faint
			rows = append(rows, layout.Rigid(s.Layout))
		}
		return layout.Flex{Axis: layout.Vertical}.Layout(gtx, rows...)
	})
	call := m.Stop()
	if i == u.active {
		paint.FillShape(gtx.Ops, activeBg, clip.Rect{Max: d.Size}.Op())
	}
	call.Add(gtx.Ops)
	return d
}

func (u *ui) main(gtx C) D {
	c := u.chats[u.active]
	return layout.Flex{Axis: layout.Vertical}.Layout(gtx,
		layout.Rigid(func(gtx C) D {
			gtx.Constraints.Min.Y = gtx.Dp(headerHeight)
			return layout.Inset{Left: 8, Top: 6}.Layout(gtx, material.H6(u.th, "# "+c.id).Layout)
		}),
		layout.Flexed(1, func(gtx C) D { return u.transcript(gtx, c) }),
		layout.Rigid(func(gtx C) D { return u.composer(gtx, c) }),
	)
}

func (u *ui) transcript(gtx C, c *chat) D {
	if !c.laidOut {
		c.restore(gtx.Metric.PxPerDp)
	}
	return material.List(u.th, &c.list).Layout(gtx, len(c.items), func(gtx C, i int) D {
		it := c.items[i]
		l := material.Body1(u.th, it.From+": "+it.Text)
		if it.From != "you" {
			l.Color = faint
		}
		return layout.Inset{Left: 8, Right: 8, Top: 2, Bottom: 2}.Layout(gtx, l.Layout)
	})
}

func (u *ui) composer(gtx C, c *chat) D {
	h := gtx.Dp(composerHeight)
	gtx.Constraints = layout.Exact(image.Pt(gtx.Constraints.Max.X, h))
	line := clip.Rect{Max: image.Pt(gtx.Constraints.Max.X, gtx.Dp(1))}.Op()
	paint.FillShape(gtx.Ops, rule, line)
	return layout.UniformInset(unit.Dp(8)).Layout(gtx, func(gtx C) D {
		e := material.Editor(u.th, &c.editor, "Message #"+c.id+" (enter sends, shift+enter: new line, ctrl+tab: next chat)")
		return e.Layout(gtx)
	})
}

// status is the bottom line: the save mode, the qos mode and each running
// agent's tier as qos.Inspect read it back, then the latest note.
func (u *ui) status(gtx C) D {
	gtx.Constraints = layout.Exact(image.Pt(gtx.Constraints.Max.X, gtx.Dp(statusHeight)))
	fill(gtx, sidebarBg)
	parts := []string{u.app.state.Saves.Name(), "qos " + string(u.app.cfg.Mode)}
	if len(u.tiers) > 0 {
		var ts []string
		for id, t := range u.tiers {
			ts = append(ts, id+" "+t)
		}
		slices.Sort(ts)
		parts = append(parts, fmt.Sprintf("%d agents: %s", len(ts), strings.Join(ts, ", ")))
	}
	if u.note != "" {
		parts = append(parts, u.note)
	}
	l := material.Caption(u.th, strings.Join(parts, " │ "))
	l.MaxLines = 1
	return layout.Inset{Left: 8, Top: 6}.Layout(gtx, l.Layout)
}

// fill paints the whole of gtx's maximum constraints.
func fill(gtx C, c color.NRGBA) {
	paint.FillShape(gtx.Ops, c, clip.Rect{Max: gtx.Constraints.Max}.Op())
}
