package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// renderTable writes the Markdown report: the environment header, the notes
// on how figures were combined, a warning when the machine was busy, and one
// row per metric with one column per arm and the change against default.
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
		cells := make([]string, len(env.Arms))
		for i, a := range env.Arms {
			cells[i] = cell(byKey[k], a)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", probe, metric, strings.Join(cells, " | "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeHeader(b *strings.Builder, env envInfo) {
	fmt.Fprintf(b, "## offmain bench, %s\n\n", env.Started.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(b, "- Machine: kernel %s, %d cores, autogroup %s, I/O scheduler %s, cgroup %s, RLIMIT_NICE %s, %s.\n",
		env.Kernel, env.Cores, env.Autogroup, env.IOScheduler, env.Cgroup, env.RlimitNice, env.Go)
	fmt.Fprintf(b, "- Load per arm: %s. Read probe: %s. Scratch folder: %q (removed).\n",
		env.Load, env.ReadMethod, env.Scratch)
	fmt.Fprintf(b, "- %s per arm and round, %d round(s), arms interleaved within each round (order reversed in even rounds); wall time %s. Before the run: load average %s, CPU busy %.0f%%.\n",
		env.Duration, env.Rounds, env.Wall, env.LoadStart, 100*env.BusyStart)
	fmt.Fprintf(b, "- Figures in ms are medians over the %d round(s); counts (over_frame, skipped_ticks, saves) are sums over them; max_ms is the largest of the rounds. In parentheses: change against `default`.\n",
		env.Rounds)
	b.WriteString("- over_frame: longer than one 16.7 ms frame (from the tick for frame and ui, from the call for saves); skipped_ticks: ticks a loop missed entirely while its previous frame or call ran long (the percentiles cover only the ticks that ran).\n")
	if len(env.Applied) > 0 {
		fmt.Fprintf(b, "- Applied, read back from one spinner of each arm:")
		for _, a := range env.Arms {
			if s, ok := env.Applied[a]; ok {
				fmt.Fprintf(b, " `%s`: %s;", a, s)
			}
		}
		b.WriteString("\n")
	}
	if env.Warning != "" {
		fmt.Fprintf(b, "\n> **Warning:** %s\n", env.Warning)
	}
	b.WriteString("\n")
}

// cell formats one arm's figure with its change against default.
func cell(byArm map[string]row, armName string) string {
	r, ok := byArm[armName]
	if !ok {
		return "–"
	}
	s := formatValue(r)
	// The load average is context, not an outcome: no change for it.
	if d, ok := byArm["default"]; ok && armName != "default" && r.Probe != "machine" {
		s += change(r.Value, d.Value)
	}
	return s
}

// formatValue prints counts as integers and other figures with three
// significant digits or more.
func formatValue(r row) string {
	if r.Agg == aggSum {
		return fmt.Sprintf("%.0f", r.Value)
	}
	v := math.Abs(r.Value)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", r.Value)
	case v >= 10:
		return fmt.Sprintf("%.1f", r.Value)
	case v >= 1:
		return fmt.Sprintf("%.2f", r.Value)
	}
	return fmt.Sprintf("%.3g", r.Value)
}

// change returns " (+12%)" for v against base, "" when base is zero.
func change(v, base float64) string {
	if base == 0 {
		return ""
	}
	p := math.Round(100 * (v - base) / base)
	if p == 0 {
		return " (0%)"
	}
	return fmt.Sprintf(" (%+.0f%%)", p)
}
