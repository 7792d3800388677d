//go:build unix

package statefile_test

// Case 8 of the reliability suite: state files and the directories the
// Store makes are private by default, whatever the umask; temp files are
// created with O_EXCL; a symlink planted at a temp name or at the final
// name is never followed into writing somewhere else.

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/statetest"
	"github.com/offmain/offmain/statefile"
)

// withUmask sets the process umask for the rest of the test. The umask is
// process-wide: no test of this package that runs in parallel writes files.
func withUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// A umask of 0 lets through whatever mode the Store asks for: files must
// still be 0600 and the directories it makes 0700, also the quarantined
// copy of a corrupt file.
func TestSecurityDefaultModes(t *testing.T) {
	withUmask(t, 0)
	root := t.TempDir()
	path := filepath.Join(root, "made", "deeper", "state.json")
	s := statefile.NewStore(statefile.Options{})
	f, err := statefile.Open[string](s, path)
	require.NoError(t, err)
	require.NoError(t, f.Save("secret"))
	require.NoError(t, f.Flush(context.Background()))
	statetest.RequireMode(t, filepath.Join(root, "made"), fs.ModeDir|0o700)
	statetest.RequireMode(t, filepath.Join(root, "made", "deeper"), fs.ModeDir|0o700)
	statetest.RequireMode(t, path, 0o600)

	// A save over an existing, more open file makes it private again: the
	// new file is the temp file, created 0600, renamed over the old one.
	require.NoError(t, os.Chmod(path, 0o644))
	require.NoError(t, f.Save("secret 2"))
	require.NoError(t, f.Flush(context.Background()))
	statetest.RequireMode(t, path, 0o600)

	require.NoError(t, os.WriteFile(path, []byte("{torn"), 0o600))
	_, err = f.Load(context.Background())
	var ce *statefile.CorruptError
	require.ErrorAs(t, err, &ce)
	statetest.RequireMode(t, ce.Aside, 0o600)
	require.NoError(t, s.Close(context.Background()))
}

// renameio creates each temp file with O_RDWR|O_CREATE|O_EXCL under a
// random int64 name, retrying on EEXIST (renameio/v2 v2.0.2, tempfile.go,
// openTempFile), so it can neither open a file planted at its name nor
// follow a symlink planted there (open(2): "If O_CREAT and O_EXCL are set
// and pathname is a symbolic link, open() fails with EEXIST"). The name
// cannot be predicted, so this is checked at its source: this test fails
// when the renameio version changes, until someone re-reads the new one.
func TestSecurityTempFileExclusive(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(gomod), "github.com/google/renameio/v2 v2.0.2",
		"renameio changed: check that its temp files are still opened with O_EXCL, then update this test")
}

// Symlinks planted at names shaped like the temp files, pointing at a file
// of the victim's, are neither followed nor removed by saves and sweeps:
// the victim keeps its bytes and every link stays.
func TestSecuritySymlinkAtTempName(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o600))
	const planted = 1000
	for i := range planted {
		n := strconv.Itoa(i)
		if i%2 == 1 {
			n = strconv.FormatInt(int64(i)*0x7fffffffffff, 10) // int64-sized names too
		}
		require.NoError(t, os.Symlink(victim, filepath.Join(dir, ".state.json"+n)))
	}
	path := filepath.Join(dir, "state.json")
	for round := range 3 { // each round is a new Store: a sweep at its first Open
		s := statefile.NewStore(statefile.Options{})
		f, err := statefile.Open[string](s, path)
		require.NoError(t, err)
		for i := range 20 {
			require.NoError(t, f.Save(strings.Repeat("x", i)))
			require.NoError(t, f.Flush(context.Background()))
		}
		require.NoError(t, s.Close(context.Background()))
		assert.Equal(t, "keep", string(statetest.ReadBytes(t, victim)), "round %d: the victim was written", round)
	}
	links := statetest.TempNames(t, dir, "state.json")
	assert.Len(t, links, planted, "the planted links stay; no temp file is left")
	for _, name := range links {
		target, err := os.Readlink(filepath.Join(dir, name))
		require.NoError(t, err, "%s is no longer a symlink", name)
		assert.Equal(t, victim, target)
	}
	statetest.RequireMode(t, path, 0o600)
}

// A symlink at the final name is replaced by the save, never written
// through; Remove removes the link, not its target; and a Load through a
// link to garbage moves the link aside, leaving the target alone.
func TestSecuritySymlinkAtFinalName(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	path := filepath.Join(dir, "state.json")
	plant := func(content string) {
		t.Helper()
		require.NoError(t, os.WriteFile(victim, []byte(content), 0o600))
		require.NoError(t, os.RemoveAll(path))
		require.NoError(t, os.Symlink(victim, path))
	}
	s := statefile.NewStore(statefile.Options{})
	f, err := statefile.Open[string](s, path)
	require.NoError(t, err)

	plant(`"keep"`)
	require.NoError(t, f.Save("mine"))
	require.NoError(t, f.Flush(context.Background()))
	assert.Equal(t, `"keep"`, string(statetest.ReadBytes(t, victim)), "save wrote through the link")
	statetest.RequireMode(t, path, 0o600)
	assert.Equal(t, "\"mine\"\n", string(statetest.ReadBytes(t, path)))

	plant(`"keep"`)
	require.NoError(t, f.Remove())
	require.NoError(t, f.Flush(context.Background()))
	assert.Equal(t, `"keep"`, string(statetest.ReadBytes(t, victim)), "remove deleted the link's target")
	_, err = os.Lstat(path)
	assert.ErrorIs(t, err, fs.ErrNotExist)

	plant("{garbage")
	_, err = f.Load(context.Background())
	var ce *statefile.CorruptError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "{garbage", string(statetest.ReadBytes(t, victim)), "the link's target stays where it is, unchanged")
	target, err := os.Readlink(ce.Aside)
	require.NoError(t, err, "the link itself was moved aside")
	assert.Equal(t, victim, target)
	require.NoError(t, s.Close(context.Background()))
}
