package statefile_test

// The power-cut torture run over the ways others write a file, and over
// statefile with a step removed: each must lose acknowledged values, or
// the model or the torture is too weak to prove anything.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/reliability/internal/powercut"
	"github.com/offmain/offmain/statefile"
)

// syncWriter writes each save before Save returns, with one of the
// commit functions below; its Flush reports the first failure since the
// last Flush, the acknowledgement those writers give.
type syncWriter struct {
	path   string
	commit func(path string, data []byte) error
	err    error
}

func (w *syncWriter) Save(v int) error {
	var err error
	if v == 0 {
		if err = os.Remove(w.path); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	} else {
		data, _ := json.Marshal(newPCValue(v))
		err = w.commit(w.path, append(data, '\n'))
	}
	if err != nil && w.err == nil {
		w.err = err
	}
	return err
}

func (w *syncWriter) Flush(context.Context) error {
	err := w.err
	w.err = nil
	return err
}

func (w *syncWriter) Close(context.Context) error { return nil }

func syncSubject(commit func(string, []byte) error) powercut.Subject {
	return powercut.Subject{
		Open: func(dir string) (powercut.Writer, int, error) {
			path := filepath.Join(dir, pcName)
			w := &syncWriter{path: path, commit: commit}
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return w, 0, nil
			}
			if err != nil {
				return nil, 0, err
			}
			var v pcValue
			if json.Unmarshal(data, &v) != nil || !v.whole() {
				return w, 0, fmt.Errorf("%w: %q", powercut.ErrTorn, data)
			}
			return w, v.N, nil
		},
		Leftover: isTemp,
	}
}

// tempRename writes a temp file beside path and renames it over path,
// fsyncing the temp file first if sync. With sync it is what renameio's
// WriteFile, Chromium's ImportantFileWriter and AndroidX DataStore do; they
// do not fsync the directory. Without, it is electron-store (through
// write-file-atomic without fsync) and Firefox's JSONFile (IOUtils.writeJSON
// with a tmpPath, no flush).
func tempRename(sync bool) func(string, []byte) error {
	return func(path string, data []byte) error {
		tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+strconv.Itoa(os.Getpid()))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if err == nil && sync {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		return os.Rename(tmp, path)
	}
}

// inPlace truncates path, writes data and fsyncs it.
func inPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// TestPowerCutTeeth runs the torture of TestPowerCut over other writers
// and over statefile run as if a step were removed (the filesystem then
// ignores that fsync): each must lose or tear acknowledged values. 200
// cuts each, 1,000 with OFFMAIN_LONG=1 (the table in RELIABILITY.md).
func TestPowerCutTeeth(t *testing.T) {
	cuts := 200
	if os.Getenv("OFFMAIN_LONG") == "1" {
		cuts = 1000
	}
	writers := []struct {
		name string
		fs   powercut.Options
		s    powercut.Subject
	}{
		{"temp + fsync + rename, no directory fsync (renameio, Chromium, DataStore)", powercut.Options{}, syncSubject(tempRename(true))},
		{"temp + rename, no fsync (electron-store, Firefox JSONFile)", powercut.Options{}, syncSubject(tempRename(false))},
		{"in place: truncate, write, fsync", powercut.Options{}, syncSubject(inPlace)},
		{"statefile, directory fsync removed", powercut.Options{IgnoreDirFsync: true}, storeSubject(statefile.Options{})},
		{"statefile, file fsync removed", powercut.Options{IgnoreFsync: true}, storeSubject(statefile.Options{})},
		{"statefile Atomic (no fsync, documented)", powercut.Options{}, storeSubject(statefile.Options{Durability: statefile.Atomic})},
	}
	seed := pcSeed(t)
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			opts := w.fs
			opts.Seed = seed
			fsys := powercut.MountT(t, opts)
			c, err := powercut.Torture(fsys, fsys.Dir(), w.s, powercut.Config{Cuts: cuts, Seed: seed, RemoveEvery: 16})
			require.NoError(t, err)
			t.Logf("POWERCUT-TEETH %s: %v", w.name, c)
			assert.Positive(t, c.Lost+c.Older+c.Torn, "acknowledged values lost, older or torn")
			// Each bad cut is described, the first ten of them.
			require.NotEmpty(t, c.Faults, "Faults")
			assert.LessOrEqual(t, len(c.Faults), 10, "Faults are bounded")
			assert.Regexp(t, `^cut \d+: (lost|older|torn|leftover)`, c.Faults[0])
			t.Log(c.Faults[0])
		})
	}
}
