package config

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/qos"
)

var testOptions = Options{Name: "composer"}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseConfig(t *testing.T) {
	c, err := Parse([]string{"-dir", "/x", "-sync-saves", "-agents", "-agent", "make", "-chats", "a, b-2"},
		env(map[string]string{ProbeEnv: "/p.csv", qos.EnvVar: "background"}), io.Discard, testOptions)
	require.NoError(t, err)
	assert.Equal(t, Config{Dir: "/x", SyncSaves: true, Chats: []string{"a", "b-2"}, AgentCmd: "make",
		Agents: true, ProbePath: "/p.csv", Mode: qos.ModeBackground}, c)
}

func TestParseConfigDefaults(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/cfg") // what os.UserConfigDir reads on Linux
	c, err := Parse(nil, env(nil), io.Discard, testOptions)
	require.NoError(t, err)
	assert.Equal(t, []string{"general", "build", "review"}, c.Chats)
	assert.Equal(t, qos.ModeUtility, c.Mode, "OFFMAIN_QOS unset means utility")
	assert.Empty(t, c.ProbePath, "probe off")
	assert.False(t, c.SyncSaves)
	if filepath.Separator == '/' {
		assert.Equal(t, "/cfg/offmain-composer", c.Dir)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"bad chat name", []string{"-chats", "Has Space"}},
		{"chat twice", []string{"-chats", "a,a"}},
		{"empty chat", []string{"-chats", "a,"}},
		{"stray argument", []string{"-dir", "/x", "extra"}},
		{"unknown flag", []string{"-nope"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.args, env(nil), io.Discard, testOptions)
			assert.Error(t, err)
		})
	}
	_, err := Parse([]string{"-h"}, env(nil), io.Discard, testOptions)
	assert.True(t, IsHelp(err))
}

func TestParseConfigBadQosModeFallsBack(t *testing.T) {
	c, err := Parse([]string{"-dir", "/x"}, env(map[string]string{qos.EnvVar: "turbo"}), io.Discard, testOptions)
	require.NoError(t, err, "a bad mode is shown, not fatal")
	assert.Equal(t, qos.ModeUtility, c.Mode)
	require.Error(t, c.ModeErr)
	assert.ErrorContains(t, c.ModeErr, "unknown mode")
	assert.Contains(t, c.ModeErr.Error(), qos.EnvVar)
}

func TestUsageNamesTheApp(t *testing.T) {
	var b strings.Builder
	_, err := Parse([]string{"-h"}, env(nil), &b, Options{Name: "gui", Command: "offmain-gui", Summary: "A desktop chat app."})
	require.True(t, IsHelp(err))
	assert.True(t, strings.HasPrefix(b.String(), "usage: offmain-gui [flags]\n\nA desktop chat app.\nEnvironment: OFFMAIN_QOS="), "usage: %s", b.String())
	assert.Contains(t, b.String(), "<user config dir>/offmain-gui)")
	_, err = Parse([]string{"-chats", "a,a"}, env(nil), io.Discard, Options{Name: "gui"})
	assert.EqualError(t, err, `gui: chat "a" named twice`)
}
