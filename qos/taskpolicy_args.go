//go:build darwin || linux

package qos

import (
	"path/filepath"
	"strings"
)

// The argument list Start gives /usr/sbin/taskpolicy on macOS. It is built
// here, with no macOS call, so that it is tested on Linux too
// (taskpolicy_args_test.go runs the command line it builds, minus taskpolicy).

const (
	taskpolicy = "/usr/sbin/taskpolicy"
	// argv0Shell sets a distinct argv[0], which taskpolicy cannot do.
	argv0Shell = "/bin/bash"
	// argv0Script is run by argv0Shell with $0 the argv[0] to set and "$@"
	// the program and its arguments. bash(1), SHELL BUILTIN COMMANDS, exec:
	// "If the -a option is supplied, the shell passes name as the zeroth
	// argument to the executed command".
	argv0Script = `exec -a "$0" "$@"`
)

// taskpolicyArgs returns the argument list, argv[0] first, of a taskpolicy
// command that runs the program at path with the argument list args (args[0]
// is its argv[0]; an empty args means path, as in [exec.Cmd.Args]), under
// the taskpolicy flags. env is the environment the command will get, and
// shell is argv0Shell, or "" if that is not available.
//
// taskpolicy execs its program with posix_spawnp(&pid, argv[0], NULL, &attr,
// argv, environ), argv being its own arguments after the options
// (system_cmds, taskpolicy/taskpolicy.c): the program's name is both the
// file it runs and the argv[0] the program sees, and a relative name without
// a slash is looked up in PATH. So:
//   - a path not starting with "/" gets "./" in front: the file Go's exec
//     would run (relative to the command's Dir), never a PATH entry and
//     never an option for getopt(3); "--" ends taskpolicy's options too;
//   - when argv[0] differs from that path (exec.Command("zsh") has Path
//     "/bin/zsh" and Args[0] "zsh", a login shell "-zsh"), taskpolicy runs
//     bash in POSIX mode, which reads no startup file when not interactive
//     (bash(1), INVOCATION), and bash execs the program with exec -a. The
//     pid stays the program's (bash replaces itself). bash sets PWD, so it is
//     unset again when env has none, and bash's exec exports SHLVL=0 when env
//     has no SHLVL (bash's exec builtin lowers SHLVL by one, creating it if
//     absent), which shells read as they read an absent SHLVL.
//
// With no shell the program sees its path as argv[0], as with taskpolicy
// alone.
func taskpolicyArgs(flags []string, path string, args, env []string, shell string) []string {
	argv0 := path
	if len(args) > 0 {
		argv0, args = args[0], args[1:]
	}
	if !filepath.IsAbs(path) {
		path = "./" + path
	}
	out := append([]string{taskpolicy}, flags...)
	out = append(out, "--")
	if argv0 == path || shell == "" {
		out = append(out, path)
		return append(out, args...)
	}
	script := argv0Script
	if !hasEnv(env, "PWD") {
		script = "unset PWD; " + script
	}
	out = append(out, shell, "--posix", "-c", script, argv0, path)
	return append(out, args...)
}

// hasEnv reports whether environ, a list of "KEY=value" strings, sets key.
func hasEnv(environ []string, key string) bool {
	for _, kv := range environ {
		if k, _, ok := strings.Cut(kv, "="); ok && k == key {
			return true
		}
	}
	return false
}
