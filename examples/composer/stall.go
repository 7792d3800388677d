package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/offmain/offmain/stall"
)

// stallEnv turns stall on (stall.Options.EnvOnly): OFFMAIN_STALL=1.
const stallEnv = "OFFMAIN_STALL"

// stallLog is the file, in the state folder, that the app's log and so
// stall's reports go to: the terminal is the program's.
const stallLog = "composer.log"

// watchStall watches the calling goroutine, which must be the one that
// calls Program.Run (bubbletea runs Update and View on it, and waits there
// for its next message in (*Program).eventLoop, which stall knows as its
// idle wait), when OFFMAIN_STALL asks for it. stall logs each wait longer
// than a frame to slog.Default, which writes through the standard log:
// bubbletea's LogToFile points that at dir/composer.log while the program
// runs, as bubbletea's documentation has a program log. The stop it returns
// reports what is left and points the log back at stderr.
func watchStall(dir string) (stop func()) {
	if os.Getenv(stallEnv) == "" {
		return func() {}
	}
	f, err := tea.LogToFile(filepath.Join(dir, stallLog), "")
	if err != nil {
		fmt.Fprintln(os.Stderr, "composer:", err)
		return func() {}
	}
	stopWatch, err := stall.Watch(stall.Options{EnvOnly: true})
	if err != nil {
		log.Print(err) // the app runs without it
	}
	return func() {
		stopWatch()
		log.SetOutput(os.Stderr)
		_ = f.Close()
	}
}
