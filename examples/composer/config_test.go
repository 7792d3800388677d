package main

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/qos"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseConfig(t *testing.T) {
	c, err := parseConfig([]string{"-dir", "/x", "-sync-saves", "-agents", "-agent", "make", "-chats", "a, b-2"},
		env(map[string]string{probeEnv: "/p.csv", qos.EnvVar: "background"}), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, config{dir: "/x", syncSaves: true, chats: []string{"a", "b-2"}, agentCmd: "make",
		agents: true, probePath: "/p.csv", mode: qos.ModeBackground}, c)
}

func TestParseConfigDefaults(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/cfg") // what os.UserConfigDir reads on Linux
	c, err := parseConfig(nil, env(nil), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"general", "build", "review"}, c.chats)
	assert.Equal(t, qos.ModeUtility, c.mode, "OFFMAIN_QOS unset means utility")
	assert.Empty(t, c.probePath, "probe off")
	assert.False(t, c.syncSaves)
	if filepath.Separator == '/' {
		assert.Equal(t, "/cfg/offmain-composer", c.dir)
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
			_, err := parseConfig(tc.args, env(nil), io.Discard)
			assert.Error(t, err)
		})
	}
	_, err := parseConfig([]string{"-h"}, env(nil), io.Discard)
	assert.True(t, isHelp(err))
}

func TestParseConfigBadQosModeFallsBack(t *testing.T) {
	c, err := parseConfig([]string{"-dir", "/x"}, env(map[string]string{qos.EnvVar: "turbo"}), io.Discard)
	require.NoError(t, err, "a bad mode is shown, not fatal")
	assert.Equal(t, qos.ModeUtility, c.mode)
	require.Error(t, c.modeErr)
	assert.ErrorIs(t, c.modeErr, qos.ErrMode)
	assert.Contains(t, c.modeErr.Error(), qos.EnvVar)
}
