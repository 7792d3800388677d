//go:build linux

package powercut

// HelperPid returns the pid of the helper process serving f.
func HelperPid(f *FS) int { return f.proc.Pid() }
