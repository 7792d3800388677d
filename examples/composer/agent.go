package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/offmain/offmain/qos"
)

// Messages from agents to the UI loop.
type (
	agentStartedMsg struct {
		chat, desc string
		pid        int
		tier       string // the applied tier, from qos.Inspect
		err        error  // the agent did not start
	}
	agentOutputMsg struct {
		chat  string
		lines []string
	}
	agentExitedMsg struct {
		chat string
		err  error // cmd.Wait's
	}
)

var errAgentsClosed = errors.New("composer: the app is quitting")

// agentSet owns the app's agents: it starts them through qos.Start at the
// Agent tier, streams their output to the UI loop, and stops them at quit.
// Its methods are safe for concurrent use (they run in tea.Cmds).
type agentSet struct {
	mode qos.Mode
	cmd  string        // the agents' command for sh -c; "" is the stand-in
	send func(tea.Msg) // hands a message to the UI loop; returns once the program has ended

	mu      sync.Mutex // protects running and closed
	running map[string]*agent
	closed  bool
}

// agent is one running command. Its pump goroutine, started by start, reads
// the output, then waits for the command, and ends; done closes then.
type agent struct {
	chat  string
	desc  string
	cmd   *exec.Cmd
	stdin *os.File      // the write end of the command's stdin
	done  chan struct{} // closed when the output ended and the command was waited for
}

func newAgentSet(mode qos.Mode, command string, send func(tea.Msg)) *agentSet {
	return &agentSet{mode: mode, cmd: command, send: send, running: map[string]*agent{}}
}

// start starts chat's agent running command ("" is the set's default) and
// returns what the UI shows about it. It is meant to run in a tea.Cmd:
// qos.Start forks from a lowered thread and may wait on the kernel's
// autogroup rate limit.
func (s *agentSet) start(chat, command string) agentStartedMsg {
	msg := agentStartedMsg{chat: chat}
	if command == "" {
		command = s.cmd
	}
	cmd, desc, err := agentCommand(command, s.mode)
	if err != nil {
		msg.err = err
		return msg
	}
	a := &agent{chat: chat, desc: desc, cmd: cmd, done: make(chan struct{})}
	s.mu.Lock()
	switch {
	case s.closed:
		err = errAgentsClosed
	case s.running[chat] != nil:
		err = fmt.Errorf("chat %s already runs an agent (ctrl+g stops it)", chat)
	default:
		s.running[chat] = a // reserved while it starts
	}
	s.mu.Unlock()
	if err != nil {
		msg.err = err
		return msg
	}
	out, in, err := a.launch(s.mode)
	if err != nil {
		s.remove(a)
		msg.err = err
		return msg
	}
	s.mu.Lock()
	a.stdin = in
	closed := s.closed
	s.mu.Unlock()
	go a.pump(out, s)
	if closed { // stopAll ran while it started and could not see it
		a.stop()
		msg.err = errAgentsClosed
		return msg
	}
	msg.desc, msg.pid = desc, cmd.Process.Pid
	msg.tier = inspectTier(msg.pid)
	return msg
}

// agentCommand builds the command for command, "" being the stand-in: this
// very binary, re-executed with workerEnv set.
func agentCommand(command string, mode qos.Mode) (*exec.Cmd, string, error) {
	var cmd *exec.Cmd
	desc := command
	if command == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, "", err
		}
		cmd = exec.Command(exe)
		desc = "built-in stand-in (CPU spinners, fsync'd writes)"
	} else {
		cmd = shellCommand(command)
	}
	env := []string{qos.Env(mode)}
	if command == "" {
		env = append(env, workerEnv+"=1")
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, probeEnv+"=") && !strings.HasPrefix(kv, workerEnv+"=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	setGroup(cmd)
	return cmd, desc, nil
}

// launch starts the command at the Agent tier and returns the read end of
// its output and the write end of its input.
func (a *agent) launch(mode qos.Mode) (out, in *os.File, err error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, errors.Join(err, outR.Close(), outW.Close())
	}
	a.cmd.Stdin, a.cmd.Stdout, a.cmd.Stderr = inR, outW, outW
	err = qos.Start(a.cmd, qos.Agent, mode)
	// The child holds its own copies now; ours would keep the pipes open.
	errs := errors.Join(inR.Close(), outW.Close())
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("qos.Start: %w", err), outR.Close(), inW.Close())
	}
	if errs != nil {
		_ = a.cmd.Process.Kill()
		_ = a.cmd.Wait()
		return nil, nil, errors.Join(errs, outR.Close(), inW.Close())
	}
	return outR, inW, nil
}

// pump is the agent's goroutine: it sends the output to the UI loop line by
// line, one message per read, then waits for the command.
func (a *agent) pump(out *os.File, s *agentSet) {
	defer close(a.done)
	buf := make([]byte, 32<<10)
	var partial []byte
	for {
		n, err := out.Read(buf)
		if n > 0 {
			var lines []string
			lines, partial = splitLines(append(partial, buf[:n]...))
			if len(lines) > 0 {
				s.send(agentOutputMsg{chat: a.chat, lines: lines})
			}
		}
		if err != nil {
			break
		}
	}
	if len(partial) > 0 {
		s.send(agentOutputMsg{chat: a.chat, lines: []string{clean(partial)}})
	}
	_ = out.Close()
	err := a.cmd.Wait()
	_ = a.stdin.Close()
	s.remove(a)
	s.send(agentExitedMsg{chat: a.chat, err: err})
}

// maxLine is where a line without an end is cut.
const maxLine = 4096

// splitLines returns the complete lines in b and what is left after them.
func splitLines(b []byte) (lines []string, rest []byte) {
	for {
		i := strings.IndexByte(string(b), '\n')
		if i < 0 {
			if len(b) > maxLine {
				lines, b = append(lines, clean(b[:maxLine])), b[maxLine:]
				continue
			}
			return lines, b
		}
		lines, b = append(lines, clean(b[:i])), b[i+1:]
	}
}

// clean drops terminal control sequences and carriage returns from a line.
func clean(b []byte) string {
	return strings.ReplaceAll(ansi.Strip(string(b)), "\r", "")
}

func (s *agentSet) remove(a *agent) {
	s.mu.Lock()
	if s.running[a.chat] == a {
		delete(s.running, a.chat)
	}
	s.mu.Unlock()
}

// get returns chat's running agent, or nil.
func (s *agentSet) get(chat string) *agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.running[chat]; a != nil && a.stdin != nil {
		return a
	}
	return nil
}

// write sends line to the agent's stdin, giving up after a second on an
// agent that does not read it. It is meant to run in a tea.Cmd.
func (a *agent) write(line string) error {
	if err := a.stdin.SetWriteDeadline(time.Now().Add(time.Second)); err != nil {
		return err
	}
	_, err := io.WriteString(a.stdin, line+"\n")
	return err
}

// stop ends the agent: its stdin closes (the stand-in exits at EOF), then its
// process group gets SIGTERM, then SIGKILL, each after a grace period. It
// returns once the agent's goroutine has ended, or after the last grace.
func (a *agent) stop() {
	_ = a.stdin.Close()
	if waitDone(a.done, 500*time.Millisecond) {
		return
	}
	signalGroup(a.cmd, false)
	if waitDone(a.done, time.Second) {
		return
	}
	signalGroup(a.cmd, true)
	waitDone(a.done, time.Second)
}

// stop stops chat's agent, if it runs one. It is meant to run in a tea.Cmd.
func (s *agentSet) stop(chat string) {
	if a := s.get(chat); a != nil {
		a.stop()
	}
}

// stopAll refuses new agents and stops every running one, in parallel.
func (s *agentSet) stopAll() {
	s.mu.Lock()
	s.closed = true
	var all []*agent
	for _, a := range s.running {
		if a.stdin != nil {
			all = append(all, a)
		}
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, a := range all {
		wg.Go(a.stop)
	}
	wg.Wait()
}

func waitDone(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
