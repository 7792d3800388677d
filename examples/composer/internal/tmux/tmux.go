// Package tmux runs one program in a private tmux server, for the composer's
// end-to-end test and its typing bench: a real terminal to type into
// (send-keys) and read (capture-pane).
//
// Each Server has its own socket in a folder of the caller's (tmux -S, the
// same privacy as -L with a unique name, and the socket goes with the
// folder) and its own configuration, so neither the user's tmux nor their
// ~/.tmux.conf is touched. The program runs under a small sh wrapper that
// waits for it, prints its exit status and signals the tmux channel "died",
// so that WaitExit blocks in tmux wait-for instead of polling; the pane stays
// after that (remain-on-exit), so its last screen can be read. The wrapper,
// not tmux, reaps the program: tmux 3.3a's own pane-died hook and
// #{pane_dead_status} were seen to miss an exit here (the program left a
// zombie that the server never reaped, in up to 1 of 5 runs).
package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNotInstalled is returned by Start when there is no tmux binary.
var ErrNotInstalled = errors.New("tmux: not installed")

const conf = `set -g remain-on-exit on
set -g status off
set -g history-limit 1000
`

// wrapper runs the program ("$@"), then notes the terminal's modes as the
// program left them (stty -a, for TerminalModes), and reports its exit
// status on the screen and to WaitExit. $0 is the socket.
const wrapper = `"$@"; s=$?; stty -a >"$0.stty" 2>&1; echo "[exit status $s]"; exec tmux -S "$0" wait-for -S died`

// Server is a private tmux server with one session, "main", running the
// program. Its methods are safe for concurrent use (each runs a tmux client).
type Server struct {
	socket string
	conf   string
}

// Start starts a tmux server with its socket and configuration in dir (which
// must exist and outlive the Server) and one w×h session running argv with
// env ("KEY=value") added to its environment.
func Start(dir string, w, h int, env, argv []string) (*Server, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, ErrNotInstalled
	}
	s := &Server{socket: filepath.Join(dir, "tmux.sock"), conf: filepath.Join(dir, "tmux.conf")}
	if err := os.WriteFile(s.conf, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	args := []string{"new-session", "-d", "-s", "main", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h),
		"--", "sh", "-c", wrapper, s.socket, "env"}
	args = append(append(args, env...), argv...)
	if _, err := s.run(context.Background(), args...); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// run runs one tmux client command against the server.
func (s *Server) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-S", s.socket, "-f", s.conf}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// SendText types text literally.
func (s *Server) SendText(text string) error {
	_, err := s.run(context.Background(), "send-keys", "-t", "main", "-l", "--", text)
	return err
}

// Paste pastes text as a terminal does (paste-buffer -p): between bracketed
// paste markers if the program asked for them, with each newline sent as CR.
func (s *Server) Paste(text string) error {
	if _, err := s.run(context.Background(), "set-buffer", "-b", "paste", "--", text); err != nil {
		return err
	}
	_, err := s.run(context.Background(), "paste-buffer", "-p", "-d", "-b", "paste", "-t", "main")
	return err
}

// SendKeys sends tmux key names, such as "C-c" or "Enter".
func (s *Server) SendKeys(keys ...string) error {
	_, err := s.run(context.Background(), append([]string{"send-keys", "-t", "main"}, keys...)...)
	return err
}

// Capture returns the pane's screen as text, after the lines that scrolled
// off its top.
func (s *Server) Capture() (string, error) {
	return s.run(context.Background(), "capture-pane", "-p", "-S", "-", "-t", "main")
}

// ProgramPID returns the pid of the program, the only child of the pane's
// wrapper shell (found with pgrep -P).
func (s *Server) ProgramPID() (int, error) {
	out, err := s.run(context.Background(), "display-message", "-p", "-t", "main", "#{pane_pid}")
	if err != nil {
		return 0, err
	}
	b, err := exec.Command("pgrep", "-P", strings.TrimSpace(out)).Output()
	if err != nil {
		return 0, fmt.Errorf("tmux: pgrep -P %s: %w", strings.TrimSpace(out), err)
	}
	f := strings.Fields(string(b))
	if len(f) != 1 {
		return 0, fmt.Errorf("tmux: the pane's shell has %d children, want 1", len(f))
	}
	return strconv.Atoi(f[0])
}

// WaitScreen returns the screen once it contains text, capturing it every
// interval until ctx ends. The screen is a terminal's state that no file or
// pipe shows, so this one wait polls (bounded by ctx, on a ticker).
func (s *Server) WaitScreen(ctx context.Context, text string, interval time.Duration) (string, error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		screen, err := s.Capture()
		if err != nil {
			return screen, err
		}
		if strings.Contains(screen, text) {
			return screen, nil
		}
		select {
		case <-ctx.Done():
			return screen, fmt.Errorf("tmux: %q not on the screen: %w", text, ctx.Err())
		case <-t.C:
		}
	}
}

// WaitExit waits, in tmux wait-for, until the program has exited, or ctx
// ends, and returns its exit status as sh reports it (128+n for signal n)
// and the screen it left.
func (s *Server) WaitExit(ctx context.Context) (int, string, error) {
	if _, err := s.run(ctx, "wait-for", "died"); err != nil {
		return 0, "", fmt.Errorf("tmux: the program did not exit: %w", errors.Join(err, ctx.Err()))
	}
	screen, err := s.Capture()
	if err != nil {
		return 0, screen, err
	}
	i := strings.LastIndex(screen, "[exit status ")
	if i < 0 {
		return 0, screen, errors.New("tmux: no exit status on the screen")
	}
	rest := screen[i+len("[exit status "):]
	n, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, ']'), 0)])
	return n, screen, err
}

// AlternateScreen reports whether the pane shows the alternate screen
// (tmux's #{alternate_on}): a full-screen program that exited without
// restoring the terminal leaves it on.
func (s *Server) AlternateScreen() (bool, error) {
	out, err := s.run(context.Background(), "display-message", "-p", "-t", "main", "#{alternate_on}")
	return strings.TrimSpace(out) == "1", err
}

// TerminalModes returns the pane's terminal modes as stty -a printed them
// once the program had exited (the wrapper runs it), for a test that
// checks that the program left the terminal in cooked mode.
func (s *Server) TerminalModes() (string, error) {
	b, err := os.ReadFile(s.socket + ".stty")
	return string(b), err
}

// KillWindow closes the program's window, as a person closing a terminal
// window does: tmux destroys the pane, and the kernel hangs up its
// terminal (SIGHUP to its processes).
func (s *Server) KillWindow() error {
	_, err := s.run(context.Background(), "kill-window", "-t", "main")
	return err
}

// Close kills the server, and with it whatever still runs in the pane (tmux
// sends it SIGHUP), and removes the socket and configuration.
func (s *Server) Close() error {
	_, err := s.run(context.Background(), "kill-server")
	if err != nil && (strings.Contains(err.Error(), "no server running") || strings.Contains(err.Error(), "error connecting")) {
		err = nil
	}
	for _, p := range []string{s.socket, s.conf, s.socket + ".stty"} {
		if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	return err
}
