package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/offmain/offmain/qos"
)

// probeEnv names the CSV file the typing probe writes; unset means off.
const probeEnv = "OFFMAIN_TYPING_PROBE"

// config is what the command line and the environment ask of the app.
type config struct {
	dir       string   // where the state lives (-dir)
	syncSaves bool     // save drafts and anchors on the UI goroutine (-sync-saves)
	chats     []string // chat names, which are also file names (-chats)
	agentCmd  string   // the agent's command for sh -c; "" is the built-in stand-in (-agent)
	agents    bool     // start every chat's agent at startup (-agents)
	probePath string   // the typing probe's CSV file; "" is off (OFFMAIN_TYPING_PROBE)
	mode      qos.Mode // the agents' qos mode (OFFMAIN_QOS)
	modeErr   error    // why OFFMAIN_QOS was not understood, shown in the status line
}

// chatName is what a chat may be called: it names its transcript file.
var chatName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// parseConfig reads the flags in args (without the program name) and the
// environment through getenv.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("gui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.dir, "dir", "", "folder for drafts, scroll places and transcripts (default: <user config dir>/offmain-gui)")
	fs.BoolVar(&c.syncSaves, "sync-saves", false, "save drafts and scroll places on the UI goroutine with a plain temp-file-and-rename write, as apps do today")
	chats := fs.String("chats", "general,build,review", "comma-separated chat names (lower case letters, digits, - and _)")
	fs.StringVar(&c.agentCmd, "agent", "", "the agent's command, run with sh -c (default: the built-in CPU- and disk-heavy stand-in)")
	fs.BoolVar(&c.agents, "agents", false, "start every chat's agent at startup")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: offmain-gui [flags]\n\nA desktop chat app (Gio) that keeps drafts and scroll places with offmain.\n"+
			"Environment: %s=utility|background|off (the agents' tier mode), %s=<file.csv> (the typing probe).\n\n", qos.EnvVar, probeEnv)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("gui: unexpected arguments %q", fs.Args())
	}
	for name := range strings.SplitSeq(*chats, ",") {
		name = strings.TrimSpace(name)
		if !chatName.MatchString(name) {
			return c, fmt.Errorf("gui: chat name %q: want lower case letters, digits, - and _ (at most 32)", name)
		}
		if slices.Contains(c.chats, name) {
			return c, fmt.Errorf("gui: chat %q named twice", name)
		}
		c.chats = append(c.chats, name)
	}
	if c.dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return c, fmt.Errorf("gui: no -dir given and %w", err)
		}
		c.dir = filepath.Join(base, "offmain-gui")
	}
	c.probePath = getenv(probeEnv)
	c.mode, c.modeErr = qos.Resolve(qos.Source{Origin: qos.EnvVar, Value: getenv(qos.EnvVar)})
	return c, nil
}

// isHelp reports whether err is the flag package's answer to -h.
func isHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }
