package main

import "fmt"

// describeErr shortens an error for the one-line status.
func describeErr(what string, err error) string {
	return fmt.Sprintf("%s: %v", what, err)
}
