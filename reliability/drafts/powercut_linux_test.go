package drafts_test

// Power cuts over drafts: see RELIABILITY.md, "Power cuts", and
// statefile's TestPowerCut.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/reliability/internal/cuttest"
	"github.com/offmain/offmain/reliability/internal/powercut"
	"github.com/offmain/offmain/statefile"
)

const pcName = "drafts.json"

// pcText is the draft text saved for n; the padding makes a torn mix of
// two saves show.
func pcText(n int) string {
	return strconv.Itoa(n) + ":" + strings.Repeat(strconv.Itoa(n)+",", 256/(len(strconv.Itoa(n))+1))
}

// pcWriter saves through a drafts.Store: Save sets one tab's draft, or
// deletes it (the file is then removed).
type pcWriter struct {
	st *statefile.Store
	d  *drafts.Store
}

func (w *pcWriter) Save(v int) error {
	if v == 0 {
		w.d.Delete("tab")
	} else {
		w.d.Set("tab", pcText(v))
	}
	return nil
}

func (w *pcWriter) Flush(ctx context.Context) error { return w.d.Flush(ctx) }

func (w *pcWriter) Close(ctx context.Context) error {
	return errors.Join(w.d.Close(ctx), w.st.Close(ctx))
}

func pcOpen(dir string) (powercut.Writer, int, error) {
	st := statefile.NewStore(statefile.Options{})
	d, err := drafts.Open(st, filepath.Join(dir, pcName), drafts.Options{})
	if err == nil {
		err = d.Load(context.Background())
	}
	if d == nil {
		return nil, 0, errors.Join(err, st.Close(context.Background()))
	}
	w := &pcWriter{st: st, d: d}
	if errors.Is(err, statefile.ErrCorrupt) {
		return w, 0, fmt.Errorf("%w: %w", powercut.ErrTorn, err)
	}
	if err != nil {
		return nil, 0, errors.Join(err, w.Close(context.Background()))
	}
	dr, ok := d.Get("tab")
	if !ok {
		return w, 0, nil
	}
	n, _, _ := strings.Cut(dr.Text, ":")
	v, err := strconv.Atoi(n)
	if err != nil || dr.Text != pcText(v) || len(d.Tabs()) != 1 {
		return w, 0, fmt.Errorf("%w: %q", powercut.ErrTorn, dr.Text)
	}
	return w, v, nil
}

// TestPowerCut edits a draft, deletes it now and then, flushes at random
// and cuts the power at a random operation, 1,000 times (20,000 with
// OFFMAIN_LONG=1). After each cut, Open must find the draft of an edit made
// at or after the last one a Flush acknowledged (or none, if that was the
// delete), whole, with no temp file left.
func TestPowerCut(t *testing.T) {
	cuttest.PowerCut(t, powercut.Subject{Open: pcOpen, Leftover: cuttest.Leftover(pcName)}, "draft")
}
