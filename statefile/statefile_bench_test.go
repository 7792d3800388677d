package statefile

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/renameio/v2/maybe"
)

// draft is a drafts-like 64 KiB value.
type draft struct {
	Text string `json:"text"`
}

var value64k = draft{Text: strings.Repeat("x", 64<<10)}

// BenchmarkSave measures the caller's cost of Save while the path's writer
// is busy (stuck in a commit), as on a disk under load. Compare with
// BenchmarkSaveSync in the same run.
func BenchmarkSave(b *testing.B) {
	s := NewStore(Options{})
	hold := make(chan struct{})
	s.hooks.commit = func(string, []byte, *SaveTrace) error { <-hold; return nil }
	f, err := Open[draft](s, filepath.Join(b.TempDir(), "draft.json"))
	if err != nil {
		b.Fatal(err)
	}
	f.Save(value64k)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f.Save(value64k)
	}
	b.StopTimer()
	close(hold)
	if err := s.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSaveSync is what an app does today on its main goroutine: encode
// and write the same 64 KiB value with renameio (temp file, fsync, rename;
// renameio/v2/maybe is renameio.WriteFile except on Windows).
func BenchmarkSaveSync(b *testing.B) {
	path := filepath.Join(b.TempDir(), "draft.json")
	b.ReportAllocs()
	for b.Loop() {
		data, err := (&slot[draft]{taking: value64k}).encode("bench.json")
		if err != nil {
			b.Fatal(err)
		}
		if err := maybe.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveDrain measures the writer's throughput for a stream of saves
// to one path on the real disk, including coalescing.
func BenchmarkSaveDrain(b *testing.B) {
	s := NewStore(Options{})
	f, err := Open[draft](s, filepath.Join(b.TempDir(), "draft.json"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		f.Save(value64k)
	}
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}
