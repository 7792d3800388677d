//go:build (!unix || aix) && !windows

package statefile

import "os"

// readStateFile reads a state file for Load: os.ReadFile.
func readStateFile(name string) ([]byte, error) { return os.ReadFile(name) }
