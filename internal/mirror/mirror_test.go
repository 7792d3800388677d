package mirror

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/offmain/offmain/statefile"
	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestReport(t *testing.T) {
	type file struct{ Keys []string }
	for _, tc := range []struct {
		name       string
		data       file
		err        error
		changed    []string
		resave     bool
		wantMerged *file // nil: merge must not run
		wantMarks  int
		wantChange []string
	}{
		{"content merged", file{[]string{"a"}}, nil, []string{"a"}, false, &file{[]string{"a"}}, 0, []string{"a"}},
		{"merge asks for a save", file{[]string{"a"}}, nil, nil, true, &file{[]string{"a"}}, 1, nil},
		{"removed file merged as empty", file{[]string{"stale"}}, &fs.PathError{Op: "open", Err: fs.ErrNotExist}, nil, true, &file{}, 1, nil},
		{"corrupt: memory kept, nothing saved over it", file{}, &statefile.CorruptError{Path: "p", Err: errors.New("bad")}, nil, false, nil, 0, nil},
		{"unreadable: memory kept", file{}, fs.ErrPermission, nil, false, nil, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var merged *file
			marks := 0
			var got []string
			Report(tc.data, tc.err, func() { marks++ },
				func(f file) ([]string, bool) { merged = &f; return tc.changed, tc.resave },
				func(keys []string) { got = keys })
			assert.Equal(t, tc.wantMerged, merged)
			assert.Equal(t, tc.wantMarks, marks, "marks")
			assert.Equal(t, tc.wantChange, got, "onChange")
		})
	}
}

func TestReportWithoutOnChange(t *testing.T) {
	assert.NotPanics(t, func() {
		Report(1, nil, func() {}, func(int) ([]string, bool) { return []string{"k"}, false }, nil)
	})
}
