//go:build windows

package statefile

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// holdTemp creates name as a writer does, holding its handle; release
// closes it.
func holdTemp(t *testing.T, name string) (release func()) {
	t.Helper()
	f, err := createTemp(name)
	require.NoError(t, err)
	return func() { require.NoError(t, f.Close()) }
}
