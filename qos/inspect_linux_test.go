//go:build linux

package qos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInspect(t *testing.T) {
	b := base(t)
	a, err := Inspect(os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, threadLine(b), threadLine(a))
	own, nice, err := autogroup(os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, own, a.Autogroup)
	assert.Equal(t, nice, a.AutogroupNice)
	devs, _ := filepath.Glob("/sys/block/*/device")
	for _, d := range devs {
		name := filepath.Base(filepath.Dir(d))
		assert.Contains(t, a.IOScheduler, name+": ", "the I/O scheduler note should cover disk %s", name)
	}
	assert.True(t, a.AppAutogroup || a.Autogroup == "", "this process shares its own autogroup")
	assert.NotContains(t, a.String(), a.IOScheduler, "String is the process's status, not the disks'")

	_, err = Inspect(1 << 30)
	assert.ErrorIs(t, err, os.ErrNotExist, "a pid that does not exist")
}

func TestParseStat(t *testing.T) {
	// Field 19 (nice) is 5 and field 41 (policy) is 5; the command name holds
	// spaces and parentheses.
	f := make([]string, 50)
	for i := range f {
		f[i] = "0"
	}
	f[19-3], f[41-3] = "5", "5"
	p, ok := parseStat([]byte("42 (a) b (c) " + strings.Join(f, " ")))
	require.True(t, ok)
	assert.Equal(t, 5, p.nice)
	assert.Equal(t, 5, p.policy)
	assert.Equal(t, "a) b (c", p.comm)
	_, ok = parseStat([]byte("42 (short) S 1"))
	assert.False(t, ok)
}

func TestActiveScheduler(t *testing.T) {
	for line, want := range map[string]string{
		"none [mq-deadline] kyber bfq\n": "mq-deadline",
		"[none] mq-deadline\n":           "none",
		"none\n":                         "none",
	} {
		assert.Equal(t, want, activeScheduler(line), "line %q", line)
	}
	for _, s := range []string{"mq-deadline", "bfq", "none", "kyber"} {
		assert.NotEmpty(t, schedulerNotes[s], "a note for %s", s)
	}
}

// TestDescribeMatchesLinuxSettings ties the declared table to the code: the
// Linux cell of each tier names what settingFor applies in each mode.
func TestDescribeMatchesLinuxSettings(t *testing.T) {
	for i, tier := range []Tier{Serving, Agent, Background} {
		row := policy[i]
		for _, m := range []Mode{ModeUtility, ModeBackground} {
			s := settingFor(tier, m).String()
			assert.Contains(t, row.linux, s, "%s/%s: the table should say %q", tierNames[tier], m, s)
		}
		assert.Equal(t, setting{}, settingFor(tier, ModeOff), "mode off applies nothing to %s", tierNames[tier])
	}
}
