package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/offmain/offmain/qos"
)

// inspectTier reads back the tier pid runs at, for the status line, once
// the steps qos.Start applies after the child started (SCHED_IDLE, an
// autogroup's nice value) have run, waiting at most a second for them.
func inspectTier(pid int) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = qos.WaitApplied(ctx) // late: show what is applied so far
	a, err := qos.Inspect(pid)
	if err != nil {
		return "tier unknown: " + err.Error()
	}
	return tierText(a)
}

// tierText is an Applied in a few characters: "nice 15 io be/7",
// "SCHED_IDLE io idle".
func tierText(a qos.Applied) string {
	cpu := fmt.Sprintf("nice %d", a.Nice)
	if a.Policy != "" && a.Policy != "SCHED_OTHER" && a.Policy != "default" {
		cpu = a.Policy
	}
	switch a.IOClass {
	case "":
		return cpu
	case "best-effort":
		return fmt.Sprintf("%s io be/%d", cpu, a.IOLevel)
	case "realtime":
		return fmt.Sprintf("%s io rt/%d", cpu, a.IOLevel)
	}
	return cpu + " io " + a.IOClass
}
