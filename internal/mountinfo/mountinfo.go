// Package mountinfo reads the mounts of this process's mount namespace
// from /proc/self/mountinfo (proc_pid_mountinfo(5)).
package mountinfo

import (
	"os"
	"slices"
	"strings"
)

// A Mount is one line of mountinfo.
type Mount struct {
	Point  string // where it is mounted (field 5), its escapes undone
	FSType string // the filesystem type: "ext4", "cgroup2", "fuse.<name>"
}

// Read returns the mounts in the order they were mounted: a later mount at
// the same point covers the earlier ones.
func Read() ([]Mount, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	return Parse(string(b)), nil
}

// Parse parses the text of a mountinfo file; it skips lines it cannot read.
// A line reads
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//
// with zero or more optional fields ("master:1") before the lone "-" that
// ends them, then the filesystem type.
func Parse(text string) []Mount {
	var ms []Mount
	for line := range strings.Lines(text) {
		// Fields are separated by single spaces; mangle_path escapes only
		// space, tab, newline and backslash, so a path may hold other
		// blanks (strings.Fields would split at a carriage return).
		f := strings.Split(strings.TrimSuffix(line, "\n"), " ")
		sep := slices.Index(f, "-")
		if sep < 6 || sep+1 >= len(f) {
			continue
		}
		ms = append(ms, Mount{Point: unescape(f[4]), FSType: f[sep+1]})
	}
	return ms
}

// Top returns the mount a path under dir reaches, the last one mounted at
// dir, and whether there is one. dir must be as mountinfo shows it:
// absolute and clean, with symbolic links resolved.
func Top(ms []Mount, dir string) (Mount, bool) {
	for _, m := range slices.Backward(ms) {
		if m.Point == dir {
			return m, true
		}
	}
	return Mount{}, false
}

// Cgroup2 returns where the cgroup v2 hierarchy is mounted (cgroups(7)),
// or "" if it is not.
func Cgroup2() string {
	ms, _ := Read()
	for _, m := range ms {
		if m.FSType == "cgroup2" {
			return m.Point
		}
	}
	return ""
}

// unescape undoes the octal escapes (\040 for a space, \011, \012, \134)
// that the kernel's seq_path puts in paths (fs/seq_file.c, mangle_path).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1:i+4]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '7' {
			return false
		}
	}
	return true
}
