package stall_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The tests choose the variable's value themselves.
	os.Unsetenv("OFFMAIN_STALL")
	goleak.VerifyTestMain(m)
}
