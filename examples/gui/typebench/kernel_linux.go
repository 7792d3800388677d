package main

import (
	"bufio"
	"compress/gzip"
	"os"
	"strings"
)

// preemptModel says how the kernel preempts a task running in the kernel
// (kernel/Kconfig.preempt): under "none", a woken thread waits for the
// running one to reach a cond_resched() or return to user space, whatever
// its priority, so an agent's long system calls delay the UI's threads
// however low the agent's tier. It reads the active model from debugfs
// (/sys/kernel/debug/sched/preempt, the word in parentheses), else the
// boot's preempt= option, else the build's default from /proc/config.gz.
func preemptModel() string {
	if b, err := os.ReadFile("/sys/kernel/debug/sched/preempt"); err == nil {
		s := string(b)
		if i, j := strings.Index(s, "("), strings.Index(s, ")"); i >= 0 && j > i {
			return s[i+1:j] + " (debugfs)"
		}
	}
	if b, err := os.ReadFile("/proc/cmdline"); err == nil {
		for f := range strings.FieldsSeq(string(b)) {
			if v, ok := strings.CutPrefix(f, "preempt="); ok {
				return v + " (boot option)"
			}
		}
	}
	if m := configPreempt(); m != "" {
		return m + " (build default, /proc/config.gz)"
	}
	return "unknown"
}

// configPreempt returns the model CONFIG_PREEMPT_* selects, "" if unknown.
func configPreempt() string {
	f, err := os.Open("/proc/config.gz")
	if err != nil {
		return ""
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return ""
	}
	models := map[string]string{"CONFIG_PREEMPT_NONE=y": "none", "CONFIG_PREEMPT_VOLUNTARY=y": "voluntary",
		"CONFIG_PREEMPT=y": "full", "CONFIG_PREEMPT_LAZY=y": "lazy", "CONFIG_PREEMPT_RT=y": "rt"}
	hz := ""
	model := ""
	sc := bufio.NewScanner(z)
	for sc.Scan() {
		if m, ok := models[sc.Text()]; ok {
			model = m
		}
		if v, ok := strings.CutPrefix(sc.Text(), "CONFIG_HZ="); ok {
			hz = v
		}
	}
	if model != "" && hz != "" {
		model += ", HZ " + hz
	}
	return model
}
