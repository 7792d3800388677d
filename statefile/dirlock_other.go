//go:build !unix || aix

package statefile

// dirLock is a no-op where temp files are not claimed with flock: on
// Windows the handle that creates a temp file holds it against the sweep
// until the move (tempclaim_windows.go), so there is no window between
// creation and claim to close; elsewhere tryLock is unsupported and the
// sweep removes nothing it cannot lock.
type dirLock struct{}

func (*dirLock) release() {}

func lockDirShared(string) *dirLock { return nil }

// lockDirSweep returns a lock that holds nothing: removeIfDead decides
// alone there.
func lockDirSweep(string) *dirLock { return &dirLock{} }
