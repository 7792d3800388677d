//go:build !windows

package statefile

import "os"

// readStateFile reads a state file for Load: os.ReadFile. A rename over the
// path does not disturb an open file on Unix; Windows needs more
// (read_windows.go).
func readStateFile(name string) ([]byte, error) { return os.ReadFile(name) }
