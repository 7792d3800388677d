package quit

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/offmain/offmain/flush"
)

func TestEndWithoutSignal(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"clean quit", nil, 0},
		{"UI failed", errors.New("no display"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := Watch(Options{Name: "test", Quit: func(os.Signal) {}})
			assert.Equal(t, tc.want, w.End(flush.Report{Saved: true, Stopped: true}, t.TempDir(), tc.err))
		})
	}
}

func TestWatchPanicsOnMisuse(t *testing.T) {
	assert.Panics(t, func() { Watch(Options{}) }, "no Quit")
	assert.Panics(t, func() { Watch(Options{Quit: func(os.Signal) {}, Stuck: 1}) }, "Stuck without Flush")
}
