package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The probe's hops, in the order of the CSV's timestamp columns (see the
// composer's probe.go).
const (
	hopRead = iota
	hopUpdate
	hopSave
	hopView
	hopFrame
	nHops
)

// segment is a span between two hops of one key.
type segment struct {
	name     string
	from, to int
}

// segments are the rows of the table: each hop to the next, then the spans
// a person feels.
var segments = []segment{
	{"key read → Update entered", hopRead, hopUpdate},
	{"Update entered → save returned", hopUpdate, hopSave},
	{"save returned → View returned", hopSave, hopView},
	{"View returned → frame written", hopView, hopFrame},
	{"key read → save returned", hopRead, hopSave},
	{"key read → View returned (UI loop)", hopRead, hopView},
	{"key read → frame written (total)", hopRead, hopFrame},
}

// keyRow is one key's timestamps (Unix ns, 0 where missing).
type keyRow struct {
	key string
	t   [nHops]int64
}

// readProbe parses the probe's CSV and keeps the rows of keys in typed.
func readProbe(r io.Reader, typed string) ([]keyRow, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 || len(recs[0]) != 2+nHops || recs[0][0] != "seq" {
		return nil, fmt.Errorf("not a typing probe file (header %q)", recs[0])
	}
	var rows []keyRow
	for _, rec := range recs[1:] {
		key := rec[1]
		if key == "space" {
			key = " "
		}
		if len([]rune(key)) != 1 || !strings.Contains(typed, key) {
			continue // ctrl+c and anything not typed by the bench
		}
		kr := keyRow{key: key}
		for i := range nHops {
			if rec[2+i] == "" {
				continue
			}
			if kr.t[i], err = strconv.ParseInt(rec[2+i], 10, 64); err != nil {
				return nil, fmt.Errorf("row %v: %w", rec, err)
			}
		}
		rows = append(rows, kr)
	}
	return rows, nil
}

// summary is the statistics of one segment in one run.
type summary struct {
	n                   int
	median, p95, lo, hi time.Duration
}

// summarize returns seg's statistics over rows that have both its hops.
func summarize(rows []keyRow, seg segment) summary {
	var d []time.Duration
	for _, r := range rows {
		if r.t[seg.from] != 0 && r.t[seg.to] != 0 {
			d = append(d, time.Duration(r.t[seg.to]-r.t[seg.from]))
		}
	}
	if len(d) == 0 {
		return summary{}
	}
	slices.Sort(d)
	return summary{n: len(d), median: quantile(d, 0.5), p95: quantile(d, 0.95), lo: d[0], hi: d[len(d)-1]}
}

// quantile is the nearest-rank quantile of sorted d.
func quantile(d []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(d)))) - 1
	return d[min(max(i, 0), len(d)-1)]
}

// ms formats d in milliseconds, with precision that suits its size.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// cell is one table cell: "median / p95 / min–max".
func (s summary) cell() string {
	if s.n == 0 {
		return "–"
	}
	return fmt.Sprintf("%s / %s / %s–%s", ms(s.median), ms(s.p95), ms(s.lo), ms(s.hi))
}

// table renders the Markdown table: one row per segment, one column per run.
func table(labels []string, runs [][]keyRow) string {
	var b strings.Builder
	b.WriteString("| hop (ms: median / p95 / min–max) | " + strings.Join(labels, " | ") + " |\n")
	b.WriteString("|---" + strings.Repeat("|---:", len(labels)) + "|\n")
	for _, seg := range segments {
		cells := make([]string, len(runs))
		for i, rows := range runs {
			cells[i] = summarize(rows, seg).cell()
		}
		b.WriteString("| " + seg.name + " | " + strings.Join(cells, " | ") + " |\n")
	}
	cells := make([]string, len(runs))
	for i, rows := range runs {
		cells[i] = strconv.Itoa(summarize(rows, segments[len(segments)-1]).n)
	}
	b.WriteString("| keys with every hop | " + strings.Join(cells, " | ") + " |\n")
	return b.String()
}
