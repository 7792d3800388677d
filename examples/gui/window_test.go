package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEndedErr: a window that ends after a close request ends the app
// normally; one that ends without (a Wayland display lost) is an error, so
// the app exits 1 and says so rather than 0 and nothing.
func TestEndedErr(t *testing.T) {
	assert.NoError(t, endedErr(true), "after a ClosingEvent")
	assert.ErrorIs(t, endedErr(false), errWindowLost, "without a ClosingEvent")
}
