// Package config reads the example apps' command line and environment: the
// same flags and variables in both apps, under each app's own name.
package config

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

// ProbeEnv names the CSV file the typing probe writes; unset means off.
const ProbeEnv = "OFFMAIN_TYPING_PROBE"

// Config is what the command line and the environment ask of the app.
type Config struct {
	Dir       string   // where the state lives (-dir)
	SyncSaves bool     // save drafts and anchors on the UI's goroutine (-sync-saves)
	Chats     []string // chat names, which are also file names (-chats)
	AgentCmd  string   // the agent's command for sh -c; "" is the built-in stand-in (-agent)
	Agents    bool     // start every chat's agent at startup (-agents)
	ProbePath string   // the typing probe's CSV file; "" is off (OFFMAIN_TYPING_PROBE)
	Mode      qos.Mode // the agents' qos mode (OFFMAIN_QOS)
	ModeErr   error    // why OFFMAIN_QOS was not understood, shown in the status line
}

// Options name the app in its usage text, its errors and its default
// folder.
type Options struct {
	// Name prefixes errors and names the flag set ("composer"); the state
	// folder's default is "offmain-" and Name, under the user's config
	// folder. Required.
	Name string
	// Command is the program's name in the usage line. Zero: Name.
	Command string
	// Summary is the usage text's line on what the app is. Zero: none.
	Summary string
}

// chatName is what a chat may be called: it names its transcript file.
var chatName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// Parse reads the flags in args (without the program name) and the
// environment through getenv; flag errors and usage go to stderr. A bad
// OFFMAIN_QOS is no error: Mode falls back to utility and ModeErr says why.
func Parse(args []string, getenv func(string) string, stderr io.Writer, opts Options) (Config, error) {
	var c Config
	fs := flag.NewFlagSet(opts.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dirName := "offmain-" + opts.Name
	fs.StringVar(&c.Dir, "dir", "", "folder for drafts, scroll places and transcripts (default: <user config dir>/"+dirName+")")
	fs.BoolVar(&c.SyncSaves, "sync-saves", false, "save drafts and scroll places on the UI goroutine with a plain temp-file-and-rename write, as apps do today")
	chats := fs.String("chats", "general,build,review", "comma-separated chat names (lower case letters, digits, - and _)")
	fs.StringVar(&c.AgentCmd, "agent", "", "the agent's command, run with sh -c (default: the built-in CPU- and disk-heavy stand-in)")
	fs.BoolVar(&c.Agents, "agents", false, "start every chat's agent at startup")
	fs.Usage = func() { usage(fs, stderr, opts) }
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%s: unexpected arguments %q", opts.Name, fs.Args())
	}
	var err error
	if c.Chats, err = parseChats(*chats, opts.Name); err != nil {
		return c, err
	}
	if c.Dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return c, fmt.Errorf("%s: no -dir given and %w", opts.Name, err)
		}
		c.Dir = filepath.Join(base, dirName)
	}
	c.ProbePath = getenv(ProbeEnv)
	if c.Mode, _, err = qos.ResolveMode(getenv(qos.EnvVar)); err != nil {
		c.ModeErr = fmt.Errorf("%s: %w", qos.EnvVar, err)
	}
	return c, nil
}

func usage(fs *flag.FlagSet, stderr io.Writer, opts Options) {
	command := opts.Command
	if command == "" {
		command = opts.Name
	}
	fmt.Fprintf(stderr, "usage: %s [flags]\n\n", command)
	if opts.Summary != "" {
		fmt.Fprintln(stderr, opts.Summary)
	}
	fmt.Fprintf(stderr, "Environment: %s=utility|background|off (the agents' tier mode), %s=<file.csv> (the typing probe).\n\n", qos.EnvVar, ProbeEnv)
	fs.PrintDefaults()
}

// parseChats splits -chats and checks each name.
func parseChats(list, app string) ([]string, error) {
	var chats []string
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if !chatName.MatchString(name) {
			return nil, fmt.Errorf("%s: chat name %q: want lower case letters, digits, - and _ (at most 32)", app, name)
		}
		if slices.Contains(chats, name) {
			return nil, fmt.Errorf("%s: chat %q named twice", app, name)
		}
		chats = append(chats, name)
	}
	return chats, nil
}

// IsHelp reports whether err is the flag package's answer to -h.
func IsHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }
