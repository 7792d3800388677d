package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
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
	{"**key sent → frame presented (total)**", total},
}

func total(s sample) int64 { return s.frame - s.sent }

// printHeader says what ran where, so a table can be read without the run.
func printHeader(w io.Writer, c config) {
	osType, _ := readTrim("/proc/sys/kernel/ostype")
	release, _ := readTrim("/proc/sys/kernel/osrelease")
	load, _ := readTrim("/proc/loadavg")
	fmt.Fprintf(w, "typebench: %s %s (preemption: %s), %d CPUs, %s; %d rounds x %d keys %v apart, seed %d; load at the end: %s\n\n",
		osType, release, preemptModel(), runtime.NumCPU(), runtime.Version(), c.rounds, c.keys, c.pace, c.seed, load)
}

// perRound returns one arm's spans of h in ms, by round, for the keys
// with every hop.
func (r *result) perRound(span func(sample) int64) [][]float64 {
	out := make([][]float64, len(r.rounds))
	for i, rr := range r.rounds {
		for _, s := range rr.samples {
			if s.frame > 0 {
				out[i] = append(out[i], float64(span(s))/1e6)
			}
		}
	}
	return out
}

// printTable writes two tables: every hop's median / p95 / max per arm, and
// per arm the key-to-frame p95 with intervals and where the time went.
func printTable(w io.Writer, results []*result, seed uint64) {
	var rs []*result
	for _, r := range results {
		if r != nil {
			rs = append(rs, r)
		}
	}
	fmt.Fprint(w, "| hop (ms: median / p95 / max, keys of all rounds) |")
	for _, r := range rs {
		fmt.Fprintf(w, " %s |", r.arm.name)
	}
	fmt.Fprint(w, "\n|---|"+strings.Repeat("---:|", len(rs))+"\n")
	for _, h := range hops {
		fmt.Fprintf(w, "| %s |", h.name)
		for _, r := range rs {
			fmt.Fprintf(w, " %s |", summary(concat(r.perRound(h.span))))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "| keys with every hop (rounds) |")
	for _, r := range rs {
		fmt.Fprintf(w, " %d (%d) |", len(concat(r.perRound(total))), len(r.rounds))
	}
	fmt.Fprint(w, "\n| quit-time flush, last round |")
	for _, r := range rs {
		fmt.Fprintf(w, " %s |", strings.TrimPrefix(r.rounds[len(r.rounds)-1].flush, "flush: "))
	}
	fmt.Fprint(w, "\n\n")
	printTotals(w, results, rand.New(rand.NewPCG(seed, 1)))
}

// printTotals writes the second table.
func printTotals(w io.Writer, results []*result, rng *rand.Rand) {
	fmt.Fprintln(w, "| arm | key → frame p95, ms [95 % interval] | minus its baseline's p95, ms [95 % interval] | frames per key | a frame, ms (median: with a key / without) | app + X server CPU per key, ms | their run-queue wait per key, ms | a nice-0 thread's 1 ms sleep woke late by, ms (p99 / max) | 64 MiB copy beside it, ms (x baseline) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		if r == nil {
			continue
		}
		var base *result
		if r.arm.base >= 0 {
			base = results[r.arm.base]
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.arm.name, p95Cell(r, rng), diffCell(r, base, rng),
			framesPerKey(r), frameTimes(r),
			perKey(r, func(rr roundResult) int64 { return rr.app.cpu + rr.x.cpu }),
			perKey(r, func(rr roundResult) int64 { return rr.app.wait + rr.x.wait }),
			lateCell(r),
			calibCell(r, base, func(c calibUse) int64 { return c.copyNS }))
	}
}

func p95Cell(r *result, rng *rand.Rand) string {
	pr := r.perRound(total)
	n := len(concat(pr))
	if !quotable(n, 0.95) {
		return fmt.Sprintf("n=%d too few for a p95", n)
	}
	p := pooledQuantile(pr, allRounds(len(pr)), 0.95)
	lo, hi, ok := interval(len(pr), func(k []int) float64 { return pooledQuantile(pr, k, 0.95) }, rng)
	if !ok {
		return fmt.Sprintf("%s (%d rounds: no interval)", fmtMS(p), len(pr))
	}
	return fmt.Sprintf("%s [%s, %s]", fmtMS(p), fmtMS(lo), fmtMS(hi))
}

// diffCell is r's p95 minus base's, resampled in pairs: the same rounds are
// drawn for both, since the arms of one round ran minutes apart.
func diffCell(r, base *result, rng *rand.Rand) string {
	if base == nil {
		return "-"
	}
	a, b := r.perRound(total), base.perRound(total)
	if len(a) != len(b) || !quotable(len(concat(a)), 0.95) || !quotable(len(concat(b)), 0.95) {
		return "-"
	}
	d := func(k []int) float64 { return pooledQuantile(a, k, 0.95) - pooledQuantile(b, k, 0.95) }
	p := d(allRounds(len(a)))
	lo, hi, ok := interval(len(a), d, rng)
	if !ok {
		return signed(p)
	}
	return fmt.Sprintf("%s [%s, %s]", signed(p), signed(lo), signed(hi))
}

// framesPerKey is how many frames the app drew while the keys were sent,
// per key: above 1, frames for other things (agents' output, the caret)
// came between the keys' frames, and a key that arrives during one waits
// for it.
func framesPerKey(r *result) string {
	var frames, keys int
	for _, rr := range r.rounds {
		frames += len(rr.frames)
		keys += len(rr.samples)
	}
	if keys == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(frames)/float64(keys))
}

// frameTimes is the median time from a frame's event to Frame's return,
// for frames that showed a key and for the others.
func frameTimes(r *result) string {
	var with, without []float64
	for _, rr := range r.rounds {
		for _, f := range rr.frames {
			d := float64(f.end-f.start) / 1e6
			if f.changes > 0 {
				with = append(with, d)
			} else {
				without = append(without, d)
			}
		}
	}
	cell := func(v []float64) string {
		if len(v) == 0 {
			return "-"
		}
		return fmtMS(quantile(v, 0.5))
	}
	return cell(with) + " / " + cell(without)
}

// perKey is f summed over rounds, divided by the keys sent.
func perKey(r *result, f func(roundResult) int64) string {
	var sum, keys int64
	for _, rr := range r.rounds {
		sum += f(rr)
		keys += int64(len(rr.samples))
	}
	if keys == 0 {
		return "-"
	}
	return ms(sum / keys)
}

// lateCell is the p99 and the max of the sleeps' lateness over all rounds.
func lateCell(r *result) string {
	var v []float64
	for _, rr := range r.rounds {
		for _, l := range rr.calib.late {
			v = append(v, float64(l)/1e6)
		}
	}
	if !quotable(len(v), 0.99) {
		return "-"
	}
	return fmtMS(quantile(v, 0.99)) + " / " + fmtMS(quantile(v, 1))
}

// calibCell is the median over rounds of f, and its ratio to base's.
func calibCell(r, base *result, f func(calibUse) int64) string {
	m := func(r *result) int64 {
		var v []int64
		for _, rr := range r.rounds {
			v = append(v, f(rr.calib))
		}
		return median(v)
	}
	v := m(r)
	if base == nil {
		return ms(v)
	}
	return fmt.Sprintf("%s (x%.2f)", ms(v), float64(v)/float64(m(base)))
}

func concat(v [][]float64) []float64 {
	var out []float64
	for _, x := range v {
		out = append(out, x...)
	}
	return out
}

// summary is "median / p95 / max" in ms; a p95 of too few keys is "-".
func summary(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	med, mx := quantile(v, 0.5), quantile(v, 1)
	p95 := "-"
	if quotable(len(v), 0.95) {
		p95 = fmtMS(quantile(v, 0.95))
	}
	return fmt.Sprintf("%s / %s / %s", fmtMS(med), p95, fmtMS(mx))
}

func ms(ns int64) string { return fmtMS(float64(ns) / 1e6) }

func fmtMS(f float64) string {
	switch a := math.Abs(f); {
	case a < 1:
		return fmt.Sprintf("%.3f", f)
	case a < 10:
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprintf("%.0f", f)
}

func signed(f float64) string {
	if f >= 0 {
		return "+" + fmtMS(f)
	}
	return fmtMS(f)
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
