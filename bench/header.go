package main

import (
	"fmt"
	"strings"
)

// writeHeader writes what the figures depend on and how to read the cells.
func writeHeader(b *strings.Builder, env envInfo) {
	fmt.Fprintf(b, "## offmain bench, %s\n\n", env.Started.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(b, "- Machine: kernel %s, %d cores, autogroup %s, I/O scheduler %s, cgroup %s, RLIMIT_NICE %s, %s. GOMAXPROCS %d while the probes ran (Go's default here: %d).\n",
		env.Kernel, env.Cores, env.Autogroup, env.IOScheduler, env.Cgroup, env.RlimitNice, env.Go, env.GoMaxProcs, env.GoDefault)
	fmt.Fprintf(b, "- Load per arm: %s; %s. Read probe: %s. Scratch folder: %q (removed).\n",
		env.Load, env.Pace, env.ReadMethod, env.Scratch)
	if len(env.Probes) > 0 {
		fmt.Fprintf(b, "- Probes: only %s (-probes); the others did not run.\n", strings.Join(env.Probes, ", "))
	}
	fmt.Fprintf(b, "- %s per arm and round, %d round(s), arms in a shuffled order each round (seed %d: %s); wall time %s. Before the run: load average %s, CPU busy %.0f%%.\n",
		env.Duration, env.Rounds, env.Seed, orders(env.Orders), env.Wall, env.LoadStart, 100*env.BusyStart)
	writeLegend(b, env)
	if len(env.Applied) > 0 {
		fmt.Fprintf(b, "- Applied (%s):", env.Checked)
		for _, a := range env.Arms {
			if s, ok := env.Applied[a]; ok {
				fmt.Fprintf(b, " `%s`: %s;", a, s)
			}
		}
		b.WriteString("\n")
	}
	for _, d := range env.Degraded {
		fmt.Fprintf(b, "- Not measured: %s\n", d)
	}
	if env.Warning != "" {
		fmt.Fprintf(b, "\n> **Warning:** %s\n", env.Warning)
	}
	b.WriteString("\n")
}

// writeLegend says how each kind of cell is computed.
func writeLegend(b *strings.Builder, env envInfo) {
	b.WriteString("- Latencies in ms: the quantile of the samples pooled over all rounds, (the lowest–highest round, where one round alone has enough samples), n = samples. ")
	fmt.Fprintf(b, "A quantile q is quoted only with at least %d samples beyond it (n·(1−q) ≥ %d: 300 for a p99, 60 for a p95); otherwise the cell is \"–\" and the over_ row counts instead.\n", tailMin, tailMin)
	fmt.Fprintf(b, "- Counts: k/n, the share, and its %.0f%% Wilson score interval. missed_ticks: scheduled ticks of a 120 Hz loop whose frame did not finish before the next tick (%.2f ms), ticks skipped while a frame ran long counted as missed; over_%.1fms: calls longer than two ticks. runq_ms_per_call: time the probe's thread waited runnable for a CPU (schedstat), per call or tick. agents: the load's progress inside the window, per second.\n",
		100*ciLevel, periodMs, overMs)
	if uiRuns(env.Probes) {
		fmt.Fprintf(b, "- ui+stall: the ui loops' frames in the half of each window in which stall watched the UI goroutine (one quarter ui-sync's, one ui-statefile's: one goroutine at a time; every probe ran under its flight recorder then), ui: those in the other half. late_p95_ms: wake lateness of the loop's ticks. reports_naming_file: of the n stall reports of that loop (waits over %.1f ms), k named the file it saves.\n", ms(stallBudget))
	}
	if env.Rounds < minCIRounds {
		fmt.Fprintf(b, "- **Intervals not computed: %d round(s), they need at least %d.** The changes shown are point figures only; do not read a difference from them.\n", env.Rounds, minCIRounds)
		return
	}
	fmt.Fprintf(b, "- vs default: change against `default` (vs idle: ratio to `idle`; for counts, the difference in percentage points), with its %.0f%% bootstrap percentile interval over whole rounds (paired: the same rounds drawn for both arms, %d resamples, seed %d). vs stall off: a ui+stall figure against the same arm's ui figure, the same way. * marks an interval that excludes no change.\n",
		100*ciLevel, bootIters, env.Seed)
}

func orders(os [][]string) string {
	var parts []string
	for _, o := range os {
		parts = append(parts, strings.Join(o, ","))
	}
	return strings.Join(parts, " / ")
}
