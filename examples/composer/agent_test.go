package main

import (
	"os"
	"path/filepath"
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
	a := &agent{stdin: f}
	assert.NoError(t, a.write("hello"))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(b))
}
