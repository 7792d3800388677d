package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

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

// agentSet owns the app's agents: it starts them through a qos.Group at the
// Agent tier, streams their output to the UI loop, and stops them at quit.
// The Group makes them end with the app: at quit through its Stop, and on
// Linux, if the app crashes or is killed, through the parent-death signal
// it sets. Its methods are safe for concurrent use (they run in tea.Cmds).
type agentSet struct {
	mode qos.Mode
	cmd  string        // the agents' command for sh -c; "" is the stand-in
	send func(tea.Msg) // hands a message to the UI loop; returns once the program has ended

	// launch starts an agent's command: (*agent).launch, which a test
	// wraps to hold a start between its fork and its check for quit.
	launch func(a *agent, mode qos.Mode) (in *os.File, err error)

	group    qos.Group     // every agent started; stopped by stopAll
	quit     chan struct{} // closed by stopAll, under mu
	mu       sync.Mutex    // protects running and the closing of quit
	running  map[string]*agent
	starting sync.WaitGroup // starts under way; added to under mu before quit, so stopAll can wait
}

// agent is one running command. Its pump goroutine, started by start, waits
// for the command and its output, and ends; done closes then.
type agent struct {
	group *qos.Group // the set's, which starts it
	chat  string
	desc  string
	cmd   *exec.Cmd
	out   *output       // the command's stdout and stderr
	stdin *os.File      // the write end of the command's stdin
	done  chan struct{} // closed when the command and its output were waited for
}

func newAgentSet(mode qos.Mode, command string, send func(tea.Msg)) *agentSet {
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
	a := &agent{group: &s.group, chat: chat, desc: desc, cmd: cmd, out: &output{chat: chat, send: s.send}, done: make(chan struct{})}
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
	if errors.Is(err, qos.ErrGroupStopped) {
		err = errAgentsClosed // stopAll ran first
	}
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

// launch starts the command at the Agent tier through the set's Group, its
// stdout and stderr copied into a.out by os/exec, and returns the write end
// of its input.
func (a *agent) launch(mode qos.Mode) (in *os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// One writer for both: os/exec gives the child one pipe for the two and
	// copies it on one goroutine, so a.out.Write is never called concurrently.
	a.cmd.Stdin, a.cmd.Stdout, a.cmd.Stderr = inR, a.out, a.out
	a.cmd.WaitDelay = outputDrain
	err = a.group.Start(a.cmd, qos.Agent, mode)
	// The child holds its own copy now; ours would keep the pipe open.
	cerr := inR.Close()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("qos.Group.Start: %w", err), inW.Close())
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
// agent that does not read it. It is meant to run in a tea.Cmd. Where the
// pipe takes no deadline (os.Pipe on Windows is not pollable, so
// SetWriteDeadline answers os.ErrNoDeadline) the write has no bound: an agent
// that does not read holds this tea.Cmd's goroutine until it exits.
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

// stop stops chat's agent, if it runs one. It is meant to run in a tea.Cmd.
func (s *agentSet) stop(chat string) {
	if a := s.get(chat); a != nil {
		a.stop()
	}
}

// stdinGrace is how long stopAll lets agents end on their own once their
// stdin closed (the stand-in does) before the Group signals them.
const stdinGrace = 500 * time.Millisecond

// stopAll refuses new agents and stops every one: their stdin closes, then
// the Group's Stop sends SIGTERM to each agent's process group and SIGKILL
// to those still there a second later (qos.Group.Stop), all in parallel.
// Starts under way are stopped too: the Group waits for them, and one that
// forked before quit stops its own agent, which stopAll waits for. It
// returns once every agent's goroutine has ended, or after the last grace.
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
	for _, a := range all {
		_ = a.stdin.Close()
	}
	waitAll(all, stdinGrace)
	ctx, cancel := context.WithTimeout(context.Background(), quitTimeout)
	defer cancel()
	_ = s.group.Stop(ctx) // what it could not stop dies with the app (Pdeathsig)
	waitAll(all, time.Second)
	s.starting.Wait()
}

// waitAll waits for every agent's goroutine to end, at most d in all.
func waitAll(all []*agent, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for _, a := range all {
		select {
		case <-a.done:
		case <-t.C:
			return
		}
	}
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
