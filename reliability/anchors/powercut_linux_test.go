package anchors_test

// Power cuts over anchors: see RELIABILITY.md, "Power cuts", and
// statefile's TestPowerCut.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/reliability/internal/cuttest"
	"github.com/offmain/offmain/reliability/internal/powercut"
	"github.com/offmain/offmain/statefile"
)

const pcName = "anchors.json"

// pcText is the item saved for n; the padding makes a torn mix of two
// saves show.
func pcText(n int) string {
	return strconv.Itoa(n) + ":" + strings.Repeat(strconv.Itoa(n)+",", 256/(len(strconv.Itoa(n))+1))
}

// pcWriter saves through an anchors.Store: Save sets one chat's place,
// or forgets it.
type pcWriter struct {
	st *statefile.Store
	d  *anchors.Store
}

func (w *pcWriter) Save(v int) error {
	if v == 0 {
		w.d.Forget("chat")
	} else {
		w.d.Set("chat", anchors.Anchor{Item: pcText(v), Offset: float64(v)})
	}
	return nil
}

func (w *pcWriter) Flush(ctx context.Context) error { return w.d.Flush(ctx) }

func (w *pcWriter) Close(ctx context.Context) error {
	return errors.Join(w.d.Close(ctx), w.st.Close(ctx))
}

func pcOpen(dir string) (powercut.Writer, int, error) {
	st := statefile.NewStore(statefile.Options{})
	d, err := anchors.Open(st, filepath.Join(dir, pcName), anchors.Options{})
	if err != nil {
		return nil, 0, errors.Join(err, st.Close(context.Background()))
	}
	w := &pcWriter{st: st, d: d}
	err = d.Load(context.Background())
	if errors.Is(err, statefile.ErrCorrupt) {
		return w, 0, fmt.Errorf("%w: %w", powercut.ErrTorn, err)
	}
	if err != nil {
		return nil, 0, errors.Join(err, w.Close(context.Background()))
	}
	a, ok := d.Get("chat")
	if !ok {
		return w, 0, nil
	}
	v := int(a.Offset)
	if a.Item != pcText(v) || d.Len() != 1 {
		return w, 0, fmt.Errorf("%w: %+v", powercut.ErrTorn, a)
	}
	return w, v, nil
}

// TestPowerCut sets a chat's place, forgets it now and then, flushes at
// random and cuts the power at a random operation, 1,000 times (20,000
// with OFFMAIN_LONG=1). After each cut, Load must find the place of a Set
// made at or after the last one a Flush acknowledged (or none, if that was
// a Forget), whole, with no temp file left.
func TestPowerCut(t *testing.T) {
	cuttest.PowerCut(t, powercut.Subject{Open: pcOpen, Leftover: cuttest.Leftover(pcName)}, "place")
}
