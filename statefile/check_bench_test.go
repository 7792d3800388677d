package statefile

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// versioned64k is a drafts-like 64 KiB value that carries a version.
type versioned64k struct {
	Version int    `json:"version"`
	Text    string `json:"text"`
}

var identityStep = []Migration{{Version: 1, Migrate: func(b []byte) ([]byte, error) { return b, nil }}}

// BenchmarkCheckBeforeSave measures the reads a save may now make of the
// file it replaces, for a 64 KiB file: the unchanged check (read and
// compare, for a save of the bytes last written), and the version check
// of a path with Migrations (read and parse the top level's "version").
// The lstat case is the unchanged check it replaced. Compare with
// BenchmarkSaveDurable in the same run.
func BenchmarkCheckBeforeSave(b *testing.B) {
	path := filepath.Join(b.TempDir(), "v.json")
	s := NewStore(Options{})
	f, err := OpenWith(s, path, FileOptions[versioned64k]{Migrations: identityStep})
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Save(versioned64k{Version: 1, Text: strings.Repeat("x", 64<<10)}); err != nil {
		b.Fatal(err)
	}
	if err := s.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	q := f.q
	b.Run("lstat", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.Lstat(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		q.slot.(*slot[versioned64k]).opts.Store(&FileOptions[versioned64k]{})
		for b.Loop() {
			if same, err := q.beforeWrite(data); err != nil || !same {
				b.Fatal(same, err)
			}
		}
	})
	b.Run("version", func(b *testing.B) {
		q.slot.(*slot[versioned64k]).opts.Store(&FileOptions[versioned64k]{Migrations: identityStep})
		q.disk.holds = seen{}
		for b.Loop() {
			if _, err := q.beforeWrite(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSaveDurable measures one durable save of a new 64 KiB value,
// Flush included, of a path without and with Migrations: the difference is
// the version check's read before the write.
func BenchmarkSaveDurable(b *testing.B) {
	for _, tc := range []struct {
		name string
		ms   []Migration
	}{{"plain", nil}, {"versioned", identityStep}} {
		b.Run(tc.name, func(b *testing.B) {
			s := NewStore(Options{})
			f, err := OpenWith(s, filepath.Join(b.TempDir(), "v.json"), FileOptions[versioned64k]{Migrations: tc.ms})
			if err != nil {
				b.Fatal(err)
			}
			text := strings.Repeat("x", 64<<10)
			i := 0
			for b.Loop() {
				i++
				if err := f.Save(versioned64k{Version: 1, Text: text + strconv.Itoa(i)}); err != nil {
					b.Fatal(err)
				}
				if err := f.Flush(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
}
