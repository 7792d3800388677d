package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchedFile(t *testing.T) {
	s := parseSchedFile("/sys/devices/pci0000:00/0000:00:05.0/virtio2/block/vda/queue/scheduler", "none [mq-deadline] kyber bfq\n")
	assert.Equal(t, "mq-deadline", s.active)
	assert.Equal(t, []string{"none", "mq-deadline", "kyber", "bfq"}, s.offered)
	assert.Equal(t, "vda", s.disk())

	all, err := s.pick([]string{"all"})
	require.NoError(t, err)
	assert.Equal(t, s.offered, all, "all: every scheduler the disk offers")
	two, err := s.pick([]string{"bfq", "mq-deadline"})
	require.NoError(t, err)
	assert.Equal(t, []string{"bfq", "mq-deadline"}, two)
	_, err = s.pick([]string{"cfq"})
	assert.ErrorIs(t, err, errUsage, "a scheduler the disk does not offer")
	assert.ErrorContains(t, err, "vda offers none, mq-deadline, kyber, bfq")
}

func TestPerScheduler(t *testing.T) {
	assert.Equal(t, "/tmp/out.json", perScheduler("/tmp/out.json", "bfq", 1), "one run keeps the name")
	assert.Equal(t, "/tmp/out.bfq.json", perScheduler("/tmp/out.json", "bfq", 2))
	assert.Equal(t, "", perScheduler("", "bfq", 2), "no file asked for")
	assert.Equal(t, "bfq", activeName("bfq (vda)"))
	assert.Equal(t, "unknown", activeName("unknown: no queue/scheduler for x"))
}
