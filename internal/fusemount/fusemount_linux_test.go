package fusemount_test

import (
	"os"
	"strings"
	"syscall"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/fusemount"
)

// mounted reports whether dir is a mount point of a FUSE filesystem named
// name, as /proc/self/mountinfo lists it (proc(5): the fields after " - "
// are the type, "fuse.<name>" here, and the source).
func mounted(t *testing.T, dir, name string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == dir && strings.Contains(line, " - fuse."+name+" ") {
			return true
		}
	}
	return false
}

func TestServeAndUnmount(t *testing.T) {
	m := fusemount.MountT(t, "fusemount-test", func(dir, backing string) (*testMount, error) {
		mnt, err := fusemount.Serve(dir, &gofs.Inode{}, fusemount.Options("fusemount-test", backing))
		return &testMount{Mount: mnt, dir: dir}, err
	})
	assert.True(t, mounted(t, m.dir, "fusemount-test"), "%s: want a fuse.fusemount-test mount", m.dir)

	// A descriptor left open makes the unmount busy: the connection is
	// aborted, the mount detached, and the error says so.
	d, err := os.Open(m.dir)
	require.NoError(t, err)
	defer d.Close()
	uerr := m.Unmount()
	assert.ErrorIs(t, uerr, syscall.EBUSY, "unmount with a descriptor open")
	assert.Contains(t, uerr.Error(), "fusemount-test: unmount "+m.dir)
	assert.False(t, mounted(t, m.dir, "fusemount-test"), "%s: still mounted after Unmount", m.dir)
	assert.Equal(t, uerr, m.Unmount(), "a second Unmount returns the same")
	m.unmounted = true
}

// testMount unmounts once at cleanup unless the test did.
type testMount struct {
	*fusemount.Mount
	dir       string
	unmounted bool
}

func (m *testMount) Unmount() error {
	if m.unmounted {
		return nil
	}
	return m.Mount.Unmount()
}

func TestServeReportsMountErrors(t *testing.T) {
	_, err := fusemount.Serve("/proc/no/such/dir", &gofs.Inode{}, fusemount.Options("fusemount-test", t.TempDir()))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "fusemount-test: mount /proc/no/such/dir: "), err.Error())
}
