package oneline_test

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/offmain/offmain/internal/oneline"
)

func TestFold(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"one line", "one line"},
		{"a\nb", "a | b"},
		{"a\r\nb\rc", "a | b | c"},
		{"a\n\n\nb\n", "a | b"},
		{errors.Join(errors.New("x"), errors.New("y")).Error(), "x | y"},
	} {
		assert.Equal(t, tc.want, oneline.Fold(tc.in), "Fold(%q)", tc.in)
	}
}

func TestJoin(t *testing.T) {
	a, b := errors.New("a"), errors.New("b\nsecond line")
	assert.NoError(t, oneline.Join(nil, nil))
	assert.Same(t, a, oneline.Join(nil, a, nil), "one one-line error: got, want it as is")
	err := oneline.Join(a, b)
	assert.Equal(t, "a | b | second line", err.Error())
	assert.ErrorIs(t, err, a)
	assert.ErrorIs(t, err, b)
	assert.Equal(t, "b | second line", oneline.Join(b).Error(), "one error of two lines")

	var pe *fs.PathError
	err = oneline.Join(a, &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrPermission})
	assert.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, fs.ErrPermission)
}

func ExampleJoin() {
	err := oneline.Join(errors.New("drafts: save: no space left on device"), errors.Join(errors.New("watch: a"), errors.New("watch: b")))
	fmt.Println(err)
	// Output: drafts: save: no space left on device | watch: a | watch: b
}

func TestCause(t *testing.T) {
	p := "/home/u/state.json"
	step := &fs.PathError{Op: "write", Path: "/home/u/.state.json123", Err: syscall.ENOSPC}
	err := &fs.PathError{Op: "statefile: save", Path: p, Err: step}
	assert.Equal(t, "save: write /home/u/.state.json123: no space left on device", oneline.Cause(p, err))
	assert.Equal(t, "other: a", oneline.Cause(p, errors.New("other: "+p+": a")))
	assert.Equal(t, "<nil>", oneline.Cause(p, nil))
}
