//go:build windows || linux

package qos

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWithPriorityClass(t *testing.T) {
	const (
		newGroup  = 0x00000200 // CREATE_NEW_PROCESS_GROUP
		noWindow  = 0x08000000 // CREATE_NO_WINDOW
		suspended = 0x00000004 // CREATE_SUSPENDED
	)
	tests := []struct {
		name         string
		flags, class uint32
		want         uint32
	}{
		{"none set, none wanted", newGroup, 0, newGroup},
		{"added to other flags", newGroup | noWindow, belowNormalPriorityClass, newGroup | noWindow | belowNormalPriorityClass},
		{"caller's lower class kept", idlePriorityClass | newGroup, belowNormalPriorityClass, idlePriorityClass | newGroup},
		{"caller's higher class lowered", highPriorityClass | suspended, belowNormalPriorityClass, belowNormalPriorityClass | suspended},
		{"caller's normal class lowered", normalPriorityClass, idlePriorityClass, idlePriorityClass},
		{"same class once", idlePriorityClass, idlePriorityClass, idlePriorityClass},
		{"caller's class alone is untouched", aboveNormalPriorityClass | newGroup, 0, aboveNormalPriorityClass | newGroup},
		{"several caller classes: the lowest", realtimePriorityClass | aboveNormalPriorityClass | normalPriorityClass, 0, normalPriorityClass},
		{"several caller classes and the tier's: the lowest", highPriorityClass | normalPriorityClass | noWindow, belowNormalPriorityClass, belowNormalPriorityClass | noWindow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withPriorityClass(tt.flags, tt.class)
			assert.Equal(t, tt.want, got, "withPriorityClass(%#x, %#x): got %#x, want %#x", tt.flags, tt.class, got, tt.want)
		})
	}
}
