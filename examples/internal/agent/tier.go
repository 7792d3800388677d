package agent

import (
	"fmt"

	"github.com/offmain/offmain/qos"
)

// inspectTier reads back the tier pid runs at, for the status line.
func inspectTier(pid int) string {
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
