package wine

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestVersion checks the detection against what the CI script that runs
// the Windows binaries under Wine says it does (.ci/wine sets
// OFFMAIN_WINE_EXPECTED=1 for this package's binary only, to check the
// check: the tests themselves never read it).
func TestVersion(t *testing.T) {
	v := Version()
	switch {
	case runtime.GOOS != "windows":
		assert.Empty(t, v, "Version on %s: got %q, want empty", runtime.GOOS, v)
	case os.Getenv("OFFMAIN_WINE_EXPECTED") == "1":
		assert.NotEmpty(t, v, "Version under Wine: got empty, want Wine's version")
		t.Logf("Wine %s", v)
	default:
		t.Logf("Version: %q", v)
	}
}
