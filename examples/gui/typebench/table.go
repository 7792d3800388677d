package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jezek/xgb/xproto"
)

// xwinKeysym is the keysym of a lower-case ASCII letter: its code
// (X11/keysymdef.h, XK_a = 0x61).
func xwinKeysym(r rune) xproto.Keysym { return xproto.Keysym(r) }

// hop is one row of the table: a span between two stamps of a key.
type hop struct {
	name string
	span func(s sample) int64
}

var hops = []hop{
	{"key sent → server took it (XTEST round trip)", func(s sample) int64 { return s.server - s.sent }},
	{"key sent → app's event (w.Event returned)", func(s sample) int64 { return s.event - s.sent }},
	{"event → editor change (handler)", func(s sample) int64 { return s.handler - s.event }},
	{"handler → save returned", func(s sample) int64 { return s.save - s.handler }},
	{"save returned → frame presented", func(s sample) int64 { return s.frame - s.save }},
	{"**key sent → frame presented (total)**", func(s sample) int64 { return s.frame - s.sent }},
}

// printTable writes one column per arm: median / p95 / max of each hop, ms.
func printTable(w io.Writer, results []result) {
	fmt.Fprint(w, "| hop (ms: median / p95 / max) |")
	for _, r := range results {
		fmt.Fprintf(w, " %s |", r.arm.name)
	}
	fmt.Fprint(w, "\n|---|")
	for range results {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, h := range hops {
		fmt.Fprintf(w, "| %s |", h.name)
		for _, r := range results {
			var v []int64
			for _, s := range r.samples {
				if s.frame > 0 {
					v = append(v, h.span(s))
				}
			}
			fmt.Fprintf(w, " %s |", summary(v))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "| keys with every hop |")
	for _, r := range results {
		fmt.Fprintf(w, " %d |", len(r.samples))
	}
	fmt.Fprint(w, "\n| quit-time flush |")
	for _, r := range results {
		fmt.Fprintf(w, " %s |", strings.TrimPrefix(r.flush, "flush: "))
	}
	fmt.Fprintln(w)
}

// summary is "median / p95 / max" in ms; p95 is the nearest rank.
func summary(v []int64) string {
	if len(v) == 0 {
		return "-"
	}
	slices.Sort(v)
	at := func(q float64) int64 {
		i := int(q*float64(len(v))+0.5) - 1
		return v[min(max(i, 0), len(v)-1)]
	}
	return fmt.Sprintf("%s / %s / %s", ms(at(0.5)), ms(at(0.95)), ms(v[len(v)-1]))
}

func ms(ns int64) string {
	f := float64(ns) / 1e6
	switch {
	case f < 1:
		return fmt.Sprintf("%.3f", f)
	case f < 10:
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprintf("%.0f", f)
}

// lastLine returns the last line of s that starts with prefix.
func lastLine(s, prefix string) string {
	var last string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			last = l
		}
	}
	return last
}
