//go:build race

package qos

// raceEnabled: the race detector's runtime sleeps a second at exit unless
// GORACE says otherwise, which a Group's helper processes must not.
const raceEnabled = true
