package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteToStdinWithoutDeadline sends a line to an agent whose stdin takes
// no write deadline, as the write end of os.Pipe on Windows (not pollable
// there) and a regular file everywhere: the line must still go through.
func TestWriteToStdinWithoutDeadline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stdin")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	require.ErrorIs(t, f.SetWriteDeadline(time.Now()), os.ErrNoDeadline, "precondition: a file that takes no deadline")
	a := &Agent{stdin: f}
	assert.NoError(t, a.Write("hello"))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(b))
}

func TestCleanDropsControlSequences(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "make: done", "make: done"},
		{"colour", "\x1b[1;31merror\x1b[0m: x", "error: x"},
		{"title", "\x1b]0;build\x07ok", "ok"},
		{"title ended by ST", "\x1b]2;t\x1b\\ok", "ok"},
		{"carriage return", "50%\r100%\r", "50%100%"},
		{"tab", "a\tb", "a    b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, clean(tc.in), "clean(%q)", tc.in)
		})
	}
}

// TestOutputSendsLines feeds an output writes that split lines anywhere:
// each message carries the lines complete so far, cleaned; a line longer
// than maxLine is cut; flush sends a last line without its end.
func TestOutputSendsLines(t *testing.T) {
	var got []Output
	o := &output{chat: "c", send: func(m any) { got = append(got, m.(Output)) }, clean: strings.ToUpper}
	for _, w := range []string{"fir", "st\nsec", "ond\nthird\n", strings.Repeat("x", maxLine+1), "\nlast"} {
		n, err := o.Write([]byte(w))
		require.NoError(t, err)
		require.Equal(t, len(w), n)
	}
	o.flush()
	want := []Output{
		{Chat: "c", Lines: []string{"FIRST"}},
		{Chat: "c", Lines: []string{"SECOND", "THIRD"}},
		{Chat: "c", Lines: []string{strings.Repeat("X", maxLine)}},
		{Chat: "c", Lines: []string{"X"}},
		{Chat: "c", Lines: []string{"LAST"}},
	}
	assert.Equal(t, want, got)
}

func TestNewWithoutSendPanics(t *testing.T) {
	assert.Panics(t, func() { New(Options{}) })
}

func TestStartWithoutCommandOrStandIn(t *testing.T) {
	s := New(Options{Send: func(any) {}})
	msg := s.Start("c", "")
	assert.ErrorContains(t, msg.Err, "no command")
	assert.Nil(t, s.Get("c"), "no agent reserved")
}
