package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// renderTable writes the Markdown report: the header (machine, run, how to
// read the cells), a warning when the machine was busy, and one row per
// metric with one column per arm, each followed by its comparisons.
func renderTable(w io.Writer, env envInfo, rows []row) error {
	var b strings.Builder
	writeHeader(&b, env)
	byKey := map[string]map[string]row{} // probe/metric -> arm -> row
	var keys []string
	for _, r := range rows {
		k := r.Probe + "/" + r.Metric
		if byKey[k] == nil {
			byKey[k] = map[string]row{}
			keys = append(keys, k)
		}
		byKey[k][r.Arm] = r
	}
	fmt.Fprintf(&b, "| probe | metric | %s |\n", strings.Join(env.Arms, " | "))
	fmt.Fprintf(&b, "|---|---|%s\n", strings.Repeat("---:|", len(env.Arms)))
	for _, k := range keys {
		probe, metric, _ := strings.Cut(k, "/")
		writeLine(&b, probe, metric, env.Arms, func(a string) string { return cell(byKey[k], a) })
		for _, base := range []string{"default", "idle", stallOffBase} {
			if hasComparison(byKey[k], base) {
				writeLine(&b, "", "vs "+base, env.Arms, func(a string) string { return cmpCell(byKey[k], a, base) })
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeLine(b *strings.Builder, probe, metric string, arms []string, f func(string) string) {
	cells := make([]string, len(arms))
	for i, a := range arms {
		cells[i] = f(a)
	}
	fmt.Fprintf(b, "| %s | %s | %s |\n", probe, metric, strings.Join(cells, " | "))
}

func hasComparison(byArm map[string]row, base string) bool {
	for _, r := range byArm {
		if comparisonTo(r, base) != nil {
			return true
		}
	}
	return false
}

func comparisonTo(r row, base string) *comparison {
	switch base {
	case "idle":
		return r.VsIdle
	case stallOffBase:
		return r.VsStallOff
	}
	return r.VsDefault
}

// cell formats one arm's own figure: a quantile with its per-round range
// and n, a fraction as k/n with its Wilson interval, a rate with its
// per-round range.
func cell(byArm map[string]row, armName string) string {
	r, ok := byArm[armName]
	if !ok {
		return "–"
	}
	switch r.Kind {
	case kindQuantile:
		if !r.Quoted {
			return fmt.Sprintf("– n=%d", r.N)
		}
		return num(float64(r.Value)) + spread(r.Rounds, num) + fmt.Sprintf(" n=%d", r.N)
	case kindFraction:
		return fmt.Sprintf("%d/%d %s [%s, %s]", r.K, r.N, pctOf(float64(r.Value)),
			pctOf(float64(r.Wilson[0])), pctOf(float64(r.Wilson[1])))
	case kindMax:
		return num(float64(r.Value)) + fmt.Sprintf(" n=%d", r.N)
	}
	return num(float64(r.Value)) + spread(r.Rounds, num)
}

// spread prints the range of the per-round figures, " (lo–hi)", when
// there are two rounds or more and each alone supports one (a range over
// some rounds would leave out the ones with the fewest samples, often the
// worst).
func spread(rounds []optFloat, f func(float64) string) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range rounds {
		x := float64(v)
		if math.IsNaN(x) {
			return ""
		}
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if len(rounds) < 2 {
		return ""
	}
	return " (" + f(lo) + "–" + f(hi) + ")"
}

// cmpCell formats an arm's comparison with base: a change in percent (or a
// ratio, against idle) for quantiles and rates, a difference in percentage
// points for fractions; the interval in brackets, marked * when it excludes
// no change.
func cmpCell(byArm map[string]row, armName, base string) string {
	r, ok := byArm[armName]
	if !ok || comparisonTo(r, base) == nil {
		return ""
	}
	c := comparisonTo(r, base)
	f, unit := func(v float64) string { return fmt.Sprintf("%+.0f", 100*(v-1)) }, "%"
	switch {
	case c.Kind == "difference":
		f, unit = func(v float64) string { return fmt.Sprintf("%+.1f", 100*v) }, " pts"
	case base == "idle":
		f, unit = num, "×"
	}
	s := f(float64(c.Value)) + unit
	if unit == "×" {
		s = unit + f(float64(c.Value))
	}
	if math.IsNaN(float64(c.Lo)) {
		return s + " (no CI)"
	}
	s += " [" + f(float64(c.Lo)) + ", " + f(float64(c.Hi)) + "]"
	if c.excludesNone() {
		s += "*"
	}
	return s
}

// num prints a figure with three significant digits or more.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "–"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// pctOf prints a fraction as a percentage.
func pctOf(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return num(100*v) + "%"
}
