package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProbeWritesKeysAndFrames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.csv")
	p := &probe{path: path}
	at := func(ns int64) time.Time { return time.Unix(0, ns) }
	p.framed(at(1), at(2)) // a frame with no change (an agent's line)
	p.changed("c1", 1, at(3), at(4), at(5))
	p.changed("c1", 2, at(3), at(6), at(7))
	p.framed(at(3), at(9)) // both changes shown in one frame
	require.NoError(t, p.write())

	keys, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "seq,chat,len,event_ns,handler_ns,save_ns,frame_ns\n0,c1,1,3,4,5,9\n1,c1,2,3,6,7,9\n", string(keys))
	frames, err := os.ReadFile(filepath.Join(filepath.Dir(path), "keys-frames.csv"))
	require.NoError(t, err)
	assert.Equal(t, "start_ns,end_ns,changes\n1,2,0\n3,9,2\n", string(frames))
}

func TestNilProbeRecordsNothing(t *testing.T) {
	var p *probe
	p.changed("c1", 1, time.Now(), time.Now(), time.Now())
	p.framed(time.Now(), time.Now())
	assert.NoError(t, p.write())
}
