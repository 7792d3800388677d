package agent

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/offmain/offmain/qos"
)

// Agent is one running command of a [Set]. Its pump goroutine, started by
// [Set.Start], waits for the command and its output, and ends; done closes
// then. A stop closes its stdin (the stand-in exits at EOF), then its
// process group gets SIGTERM, then SIGKILL, each after a grace period.
type Agent struct {
	group *qos.Group // the set's, which starts it
	chat  string
	desc  string
	cmd   *exec.Cmd
	out   *output       // the command's stdout and stderr
	stdin *os.File      // the write end of the command's stdin
	done  chan struct{} // closed when the command and its output were waited for
}

// newAgent builds chat's agent for command, "" being the stand-in: this very
// binary, re-executed with StandInEnv set.
func (s *Set) newAgent(chat, command string) (*Agent, error) {
	var cmd *exec.Cmd
	desc := command
	switch {
	case command != "":
		cmd = shellCommand(command)
	case s.opts.StandInEnv == "":
		return nil, errors.New("agent: no command given and no stand-in")
	default:
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(exe)
		desc = "built-in stand-in (CPU spinners, fsync'd writes)"
	}
	mode := s.opts.Mode
	if mode == "" {
		mode = qos.ModeUtility
	}
	env := []string{qos.EnvVar + "=" + string(mode)}
	if command == "" {
		env = append(env, s.opts.StandInEnv+"=1")
	}
	for _, kv := range os.Environ() {
		if !s.hidden(kv) {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	setGroup(cmd)
	out := &output{chat: chat, send: s.opts.Send, clean: s.opts.Clean}
	return &Agent{group: &s.group, chat: chat, desc: desc, cmd: cmd, out: out, done: make(chan struct{})}, nil
}

// hidden reports whether kv ("NAME=value") is kept from agents.
func (s *Set) hidden(kv string) bool {
	name, _, _ := strings.Cut(kv, "=")
	return (s.opts.StandInEnv != "" && name == s.opts.StandInEnv) || slices.Contains(s.opts.HideEnv, name)
}

// outputDrain is how long an agent's output is still read after the agent
// exited (exec.Cmd.WaitDelay): a process it left running in another session,
// such as a daemon it started, may hold the pipe open for ever, and stop's
// signals to the agent's group do not reach it.
const outputDrain = 250 * time.Millisecond

// launch starts the command at the Agent tier through the set's Group, its
// stdout and stderr copied into a.out by os/exec, and returns the write end
// of its input.
func (a *Agent) launch(mode qos.Mode) (in *os.File, err error) {
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
func (a *Agent) pump(s *Set) {
	defer close(a.done)
	err := a.cmd.Wait()
	a.out.flush()
	_ = a.stdin.Close()
	s.remove(a)
	s.opts.Send(Exited{Chat: a.chat, Err: err})
}

// Write sends line to the agent's stdin, giving up after a second on an
// agent that does not read it. It blocks: call it off the UI's goroutine.
// Where the pipe takes no deadline (os.Pipe on Windows is not pollable, so
// SetWriteDeadline answers os.ErrNoDeadline) the write has no bound: an
// agent that does not read holds the calling goroutine until it exits.
func (a *Agent) Write(line string) error {
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
func (a *Agent) stop() {
	_ = a.stdin.Close()
	if waitDone(a.done, stdinGrace) {
		return
	}
	signalGroup(a.cmd, false)
	if waitDone(a.done, time.Second) {
		return
	}
	signalGroup(a.cmd, true)
	waitDone(a.done, time.Second)
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
