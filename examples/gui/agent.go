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

	"github.com/offmain/offmain/qos"
)

// Messages from agents to the UI goroutine.
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

var errAgentsClosed = errors.New("gui: the app is quitting")

// agentSet owns the app's agents: it starts them through qos.Start at the
// Agent tier, streams their output to the UI goroutine, and stops them at quit.
// Its methods are safe for concurrent use (they run on goroutines of their own, never on the UI goroutine).
type agentSet struct {
	mode qos.Mode
	cmd  string    // the agents' command for sh -c; "" is the stand-in
	send func(any) // hands a message to the UI goroutine; never blocks (see post)

	// launch starts an agent's command: (*agent).launch, which a test
	// wraps to hold a start between its fork and its check for quit.
	launch func(a *agent, mode qos.Mode) (in *os.File, err error)

	quit     chan struct{} // closed by stopAll, under mu
	mu       sync.Mutex    // protects running and the closing of quit
	running  map[string]*agent
	starting sync.WaitGroup // starts under way; added to under mu before quit, so stopAll can wait
}

// agent is one running command. Its pump goroutine, started by start, waits
// for the command and its output, and ends; done closes then.
type agent struct {
	chat  string
	desc  string
	cmd   *exec.Cmd
	out   *output       // the command's stdout and stderr
	stdin *os.File      // the write end of the command's stdin
	done  chan struct{} // closed when the command and its output were waited for
}

func newAgentSet(mode qos.Mode, command string, send func(any)) *agentSet {
	return &agentSet{
		mode: mode, cmd: command, send: send, launch: (*agent).launch,
		quit: make(chan struct{}), running: map[string]*agent{},
	}
}

// quitting reports whether stopAll has run. s.mu is held.
func (s *agentSet) quitting() bool {
	select {
	case <-s.quit:
		return true
	default:
		return false
	}
}

// start starts chat's agent running command ("" is the set's default) and
// returns what the UI shows about it. It is meant to run off the UI goroutine:
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
	a := &agent{chat: chat, desc: desc, cmd: cmd, out: &output{chat: chat, send: s.send}, done: make(chan struct{})}
	s.mu.Lock()
	switch {
	case s.quitting():
		err = errAgentsClosed
	case s.running[chat] != nil:
		err = fmt.Errorf("chat %s already runs an agent (ctrl+g stops it)", chat)
	default:
		s.running[chat] = a // reserved while it starts
		s.starting.Add(1)
	}
	s.mu.Unlock()
	if err != nil {
		msg.err = err
		return msg
	}
	defer s.starting.Done()
	in, err := s.launch(a, s.mode)
	if err != nil {
		s.remove(a)
		msg.err = err
		return msg
	}
	s.mu.Lock()
	a.stdin = in
	closed := s.quitting()
	s.mu.Unlock()
	go a.pump(s)
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

// outputDrain is how long an agent's output is still read after the agent
// exited (exec.Cmd.WaitDelay): a process it left running in another session,
// such as a daemon it started, may hold the pipe open for ever, and stop's
// signals to the agent's group do not reach it.
const outputDrain = 250 * time.Millisecond

// launch starts the command at the Agent tier, its stdout and stderr copied
// into a.out by os/exec, and returns the write end of its input.
func (a *agent) launch(mode qos.Mode) (in *os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// One writer for both: os/exec gives the child one pipe for the two and
	// copies it on one goroutine, so a.out.Write is never called concurrently.
	a.cmd.Stdin, a.cmd.Stdout, a.cmd.Stderr = inR, a.out, a.out
	a.cmd.WaitDelay = outputDrain
	err = qos.Start(a.cmd, qos.Agent, mode)
	// The child holds its own copy now; ours would keep the pipe open.
	cerr := inR.Close()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("qos.Start: %w", err), inW.Close())
	}
	if cerr != nil {
		_ = a.cmd.Process.Kill()
		_ = a.cmd.Wait()
		return nil, errors.Join(cerr, inW.Close())
	}
	return inW, nil
}

// pump is the agent's goroutine: it waits for the command and for the copy
// of its output (at most outputDrain past its exit), then reports the exit.
func (a *agent) pump(s *agentSet) {
	defer close(a.done)
	err := a.cmd.Wait()
	a.out.flush()
	_ = a.stdin.Close()
	s.remove(a)
	s.send(agentExitedMsg{chat: a.chat, err: err})
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
// agent that does not read it. It is meant to run off the UI goroutine. Where the
// pipe takes no deadline (os.Pipe on Windows is not pollable, so
// SetWriteDeadline answers os.ErrNoDeadline) the write has no bound: an agent
// that does not read holds the calling goroutine until it exits.
func (a *agent) write(line string) error {
	err := a.stdin.SetWriteDeadline(time.Now().Add(time.Second))
	if err != nil && !errors.Is(err, os.ErrNoDeadline) {
		return err
	}
	_, err = io.WriteString(a.stdin, line+"\n")
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

// stop stops chat's agent, if it runs one. It is meant to run off the UI goroutine.
func (s *agentSet) stop(chat string) {
	if a := s.get(chat); a != nil {
		a.stop()
	}
}

// stopAll refuses new agents and stops every running one, in parallel. It
// also waits for starts under way: one that forked before quit stops its own
// agent, which stopAll could not see, and the app must not exit before that.
func (s *agentSet) stopAll() {
	s.mu.Lock()
	if !s.quitting() {
		close(s.quit)
	}
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
	s.starting.Wait()
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
