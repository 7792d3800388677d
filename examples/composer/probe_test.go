package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbeAttribution drives the probe's hops by hand, with made-up times,
// through the cases its documentation names.
func TestProbeAttribution(t *testing.T) {
	var buf bytes.Buffer
	p := startProbe(&buf, nil)

	// One read, one key, a frame write that began before View returned (the
	// previous frame) and one that began after.
	p.read(100)
	p.update("a", 110)
	p.saved(120)
	p.view(130)
	p.frame(125, 140) // started before the View: not this key's frame
	p.frame(135, 150)

	// Two keys from one read share it; a mouse event takes its own read.
	p.read(200)
	p.update("b", 210)
	p.view(220)
	p.update("c", 230)
	p.saved(235)
	p.view(240)
	p.read(300) // the mouse's
	p.input()
	p.read(400)
	p.update("d", 410) // a key whose frame never comes: written at close
	require.NoError(t, p.close())
	p.frame(500, 510) // after close: ignored, no panic
	recs, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, [][]string{
		probeHeader,
		{"1", "a", "100", "110", "120", "130", "150"},
		{"2", "b", "200", "210", "", "220", ""},
		{"3", "c", "200", "230", "235", "240", ""},
		{"4", "d", "400", "410", "", "", ""},
	}, recs)
}

func TestProbeOffRecordsNothing(t *testing.T) {
	var r probeRef
	r.keyRead()
	r.updateEntered(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")})
	r.saveReturned()
	r.viewRendered()
	r.frameWritten(r.frameWriteStart())
	assert.Nil(t, r.p.Load())
}

func TestOpenProbeWritesHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "probe.csv")
	p, err := openProbe(path)
	require.NoError(t, err)
	require.NoError(t, p.close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "seq,key,read_ns,update_ns,save_ns,view_ns,frame_ns\n", string(b))
}
