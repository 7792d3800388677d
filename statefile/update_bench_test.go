package statefile

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkUpdate measures the caller's cost of Update while the path's
// writer is busy (stuck in a commit), as BenchmarkSave does for Save. The
// queued fns grow one slice until the writer takes them.
func BenchmarkUpdate(b *testing.B) {
	s := NewStore(Options{})
	hold := make(chan struct{})
	s.hooks.commit = func(string, []byte, *SaveTrace) error { <-hold; return nil }
	f, err := Open[draft](s, filepath.Join(b.TempDir(), "draft.json"))
	if err != nil {
		b.Fatal(err)
	}
	f.Save(value64k)
	fn := func(d draft) (draft, error) { return d, nil }
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f.Update(fn)
	}
	b.StopTimer()
	close(hold)
	if err := s.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
}
