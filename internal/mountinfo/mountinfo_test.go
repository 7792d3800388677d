package mountinfo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lines as Linux writes them: optional fields or none, escaped blanks and
// backslashes in the mount point, two mounts stacked at one point, and a
// line cut short, which is skipped, and blanks seq_path does not escape.
func TestParse(t *testing.T) {
	text := `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 master:2 - cgroup2 cgroup2 rw,nsdelegate
41 22 0:40 / /tmp/with\040space\011tab\134back rw,relatime - tmpfs tmpfs rw,size=64k
42 41 0:41 / /tmp/with\040space\011tab\134back rw,nosuid - fuse.loopback loopback rw,user_id=0
43 22 0:42 / /cut rw -
` + "44 22 0:43 / /odd\rname\vhere rw - tmpfs tmpfs rw\n" // raw strings drop carriage returns
	want := []Mount{
		{Point: "/", FSType: "ext4"},
		{Point: "/sys/fs/cgroup", FSType: "cgroup2"},
		{Point: "/tmp/with space\ttab\\back", FSType: "tmpfs"},
		{Point: "/tmp/with space\ttab\\back", FSType: "fuse.loopback"},
		{Point: "/odd\rname\vhere", FSType: "tmpfs"},
	}
	ms := Parse(text)
	require.Equal(t, want, ms)

	top, ok := Top(ms, "/tmp/with space\ttab\\back")
	assert.True(t, ok)
	assert.Equal(t, "fuse.loopback", top.FSType, "the last mount at a point is the one reached")
	_, ok = Top(ms, "/tmp")
	assert.False(t, ok, "/tmp is not a mount point here")
}

// The escapes seq_path makes are undone; a backslash that starts no
// escape is kept as it is.
func TestUnescape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`/tmp/plain`, `/tmp/plain`},
		{`/tmp/a\040b`, `/tmp/a b`},
		{`/tmp/tab\011nl\012bs\134`, "/tmp/tab\tnl\nbs\\"},
		{`/tmp/short\04`, `/tmp/short\04`},
		{`/tmp/not\089`, `/tmp/not\089`},
		{`\134`, `\`},
	} {
		assert.Equal(t, tc.want, unescape(tc.in), "unescape(%q)", tc.in)
	}
}
