//go:build !unix || aix

package statefile

// dirLock is a no-op where temp files are not claimed with flock: on
// Windows an open temp file cannot be deleted (see tempclaim.go), so a
// sweep cannot take one between its creation and its rename; elsewhere
// tryLock is unsupported and the sweep removes nothing it cannot lock.
type dirLock struct{}

func (*dirLock) release() {}

func lockDirShared(string) *dirLock { return nil }

// lockDirSweep returns a lock that holds nothing: removeIfDead decides
// alone there.
func lockDirSweep(string) *dirLock { return &dirLock{} }
