package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPreemptModelSaysSomething(t *testing.T) {
	assert.NotEqual(t, "unknown", preemptModel(), "debugfs, the boot line or the build config names a model")
	if _, err := os.Stat("/proc/config.gz"); err == nil {
		assert.NotEmpty(t, configPreempt(), "/proc/config.gz names a CONFIG_PREEMPT_* model")
	}
}
