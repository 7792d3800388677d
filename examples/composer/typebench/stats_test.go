package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadProbeKeepsTypedKeys(t *testing.T) {
	in := `seq,key,read_ns,update_ns,save_ns,view_ns,frame_ns
1,a,100,110,120,130,150
2,space,200,210,215,220,240
3,ctrl+c,300,310,,,
4,b,400,410,,420,
5,hello,500,510,520,530,540
`
	rows, err := readProbe(strings.NewReader(in), "a b")
	require.NoError(t, err)
	assert.Equal(t, []keyRow{
		{"a", [nHops]int64{100, 110, 120, 130, 150}},
		{" ", [nHops]int64{200, 210, 215, 220, 240}},
		{"b", [nHops]int64{400, 410, 0, 420, 0}},
	}, rows)
}

func TestReadProbeRejectsOtherFiles(t *testing.T) {
	_, err := readProbe(strings.NewReader("a,b\n1,2\n"), "a")
	assert.Error(t, err)
}

func TestSummarize(t *testing.T) {
	var rows []keyRow
	for i := int64(1); i <= 20; i++ { // read → frame: 1 ms .. 20 ms
		rows = append(rows, keyRow{key: "x", t: [nHops]int64{0: 1, hopFrame: 1 + i*int64(time.Millisecond)}})
	}
	rows = append(rows, keyRow{key: "y", t: [nHops]int64{0: 1}}) // no frame: left out
	s := summarize(rows, segment{"total", hopRead, hopFrame})
	assert.Equal(t, summary{n: 20, median: 10 * time.Millisecond, p95: 19 * time.Millisecond,
		lo: time.Millisecond, hi: 20 * time.Millisecond}, s)
	assert.Equal(t, "10.0 / 19.0 / 1.0–20.0", s.cell())
	assert.Equal(t, "–", summarize(nil, segments[0]).cell())
}

func TestTable(t *testing.T) {
	rows := []keyRow{{"a", [nHops]int64{0, 100_000, 200_000, 300_000, 2_300_000}}}
	got := table([]string{"one", "two"}, [][]keyRow{rows, nil})
	lines := strings.Split(strings.TrimSpace(got), "\n")
	require.Len(t, lines, 2+len(segments)+1)
	assert.Equal(t, "| hop (ms: median / p95 / min–max) | one | two |", lines[0])
	assert.Equal(t, "| View returned → frame written | 2.0 / 2.0 / 2.0–2.0 | – |", lines[5])
	assert.Equal(t, "| keys with every hop | 0 | 0 |", lines[len(lines)-1], "read stamp 0 means missing")
}

func TestText(t *testing.T) {
	assert.Len(t, typedText, 61, "61 keys")
	assert.Equal(t, typedText, text(61))
	assert.Equal(t, "the", text(3))
	assert.Len(t, text(100), 100)
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-arms", "offmain-busy, sync-idle", "-keys", "5"})
	require.NoError(t, err)
	require.Len(t, o.arms, 2)
	assert.Equal(t, "offmain, agents busy", o.arms[0].label)
	assert.Equal(t, 5, o.keys)
	_, err = parseFlags([]string{"-arms", "nope"})
	assert.Error(t, err)
}
