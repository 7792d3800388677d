// Package agent runs the example apps' agents: one command a chat, started
// through a qos.Group at the Agent tier, its output streamed to the UI line
// by line, its input fed from the chat, and all of them stopped at quit.
// It also holds the built-in stand-in agent ([StandIn]) that the apps run
// when no command is given: the app's own binary, re-executed.
//
// The UI side differs between the apps (a bubbletea loop, a Gio window);
// what reaches it is a message ([Started], [Output], [Exited]) handed to
// [Options.Send].
package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/offmain/offmain/qos"
)

// Started is what [Set.Start] returns: the agent that started, or why not.
type Started struct {
	Chat, Desc string
	PID        int
	Tier       string // the applied tier, from qos.Inspect
	Err        error  // the agent did not start
}

// Output is a batch of lines an agent printed, sent through [Options.Send].
type Output struct {
	Chat  string
	Lines []string
}

// Exited says that chat's agent has exited, sent through [Options.Send].
type Exited struct {
	Chat string
	Err  error // cmd.Wait's
}

// ErrQuitting is returned (in [Started.Err]) by a start after [Set.StopAll].
var ErrQuitting = errors.New("agent: the app is quitting")

// Options configure a [Set]. Only Send is required.
type Options struct {
	// Mode is the qos mode agents start in. Zero: utility.
	Mode qos.Mode
	// Command is the agents' default command, run with sh -c (cmd /c on
	// Windows). Zero: the stand-in, if StandInEnv is set.
	Command string
	// Send hands a message to the UI. It is called from the Set's
	// goroutines and from Start's caller; it may block until the UI takes
	// the message but must return once the UI has ended. Required.
	Send func(msg any)
	// StandInEnv names the variable that, set to 1, makes the app's binary
	// run [StandIn]: the default agent re-executes the binary with it. Zero:
	// there is no stand-in, and a start without a command fails.
	StandInEnv string
	// HideEnv names variables the app has and its agents must not inherit
	// (the typing probe's file, say). StandInEnv is never inherited. Zero:
	// agents inherit the whole environment.
	HideEnv []string
	// Clean turns a line of an agent's output into what the UI shows. Zero:
	// terminal control sequences (CSI and OSC) and carriage returns are
	// dropped and tabs become four spaces.
	Clean func(line string) string
}

// Set owns an app's agents: it starts them through a qos.Group at the Agent
// tier, streams their output to the UI, and stops them at quit. The Group
// makes them end with the app: at quit through its Stop, and on Linux, if
// the app crashes or is killed, through the parent-death signal it sets.
// Its methods are safe for concurrent use; Start, Stop and StopAll block,
// so call them off the UI's own goroutine.
type Set struct {
	opts Options

	// launch starts an agent's command: (*Agent).launch, which a test
	// wraps to hold a start between its fork and its check for quit.
	launch func(a *Agent, mode qos.Mode) (in *os.File, err error)

	group    qos.Group     // every agent started; stopped by StopAll
	quit     chan struct{} // closed by StopAll, under mu
	mu       sync.Mutex    // protects running and the closing of quit
	running  map[string]*Agent
	starting sync.WaitGroup // starts under way; added to under mu before quit, so StopAll can wait
}

// New returns a Set that starts agents as opts say. It panics if opts.Send
// is nil.
func New(opts Options) *Set {
	if opts.Send == nil {
		panic("agent: New without Options.Send")
	}
	if opts.Clean == nil {
		opts.Clean = clean
	}
	return &Set{opts: opts, launch: (*Agent).launch, quit: make(chan struct{}), running: map[string]*Agent{}}
}

// quitting reports whether StopAll has run. s.mu is held.
func (s *Set) quitting() bool {
	select {
	case <-s.quit:
		return true
	default:
		return false
	}
}

// Start starts chat's agent running command ("" is [Options.Command]) and
// returns what the UI shows about it. It blocks: qos's start forks from a
// lowered thread and may wait on the kernel's autogroup rate limit, and the
// tier is read back once applied (up to a second).
func (s *Set) Start(chat, command string) Started {
	msg := Started{Chat: chat}
	if command == "" {
		command = s.opts.Command
	}
	a, err := s.newAgent(chat, command)
	if err != nil {
		msg.Err = err
		return msg
	}
	s.mu.Lock()
	switch {
	case s.quitting():
		err = ErrQuitting
	case s.running[chat] != nil:
		err = fmt.Errorf("chat %s already runs an agent (ctrl+g stops it)", chat)
	default:
		s.running[chat] = a // reserved while it starts
		s.starting.Add(1)
	}
	s.mu.Unlock()
	if err != nil {
		msg.Err = err
		return msg
	}
	defer s.starting.Done()
	return s.run(a)
}

// run launches a, reserved in s.running, and starts its pump.
func (s *Set) run(a *Agent) Started {
	msg := Started{Chat: a.chat}
	in, err := s.launch(a, s.opts.Mode)
	if errors.Is(err, qos.ErrGroupStopped) {
		err = ErrQuitting // StopAll ran first
	}
	if err != nil {
		s.remove(a)
		msg.Err = err
		return msg
	}
	s.mu.Lock()
	a.stdin = in
	closed := s.quitting()
	s.mu.Unlock()
	go a.pump(s)
	if closed { // StopAll ran while it started and could not see it
		a.stop()
		msg.Err = ErrQuitting
		return msg
	}
	msg.Desc, msg.PID = a.desc, a.cmd.Process.Pid
	msg.Tier = inspectTier(msg.PID)
	return msg
}

func (s *Set) remove(a *Agent) {
	s.mu.Lock()
	if s.running[a.chat] == a {
		delete(s.running, a.chat)
	}
	s.mu.Unlock()
}

// Get returns chat's running agent, or nil.
func (s *Set) Get(chat string) *Agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.running[chat]; a != nil && a.stdin != nil {
		return a
	}
	return nil
}

// Stop stops chat's agent, if it runs one (see [Agent] for how), and
// returns once it has ended or after the last grace period. Its exit
// arrives as an [Exited].
func (s *Set) Stop(chat string) {
	if a := s.Get(chat); a != nil {
		a.stop()
	}
}

// stdinGrace is how long StopAll lets agents end on their own once their
// stdin closed (the stand-in does) before the Group signals them.
const stdinGrace = 500 * time.Millisecond

// StopAll refuses new agents and stops every one: their stdin closes, then
// the Group's Stop sends SIGTERM to each agent's tree and SIGKILL to what
// is still there a second later (qos.Group.Stop), all in parallel. Starts
// under way are stopped too: the Group waits for them, and one that forked
// before quit stops its own agent, which StopAll waits for. It returns the
// Group's Stop's error (one wrapping qos.ErrKilled when some had to be
// killed) once every agent's goroutine has ended, or ctx's when ctx ends
// first. It fits a flush.Hook as a stopper: flush.Func(set.StopAll).
func (s *Set) StopAll(ctx context.Context) error {
	s.mu.Lock()
	if !s.quitting() {
		close(s.quit)
	}
	var all []*Agent
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
	err := s.group.Stop(ctx) // what it could not stop dies with the app (qos's holder, with qos.Main)
	waitAll(all, time.Second)
	s.starting.Wait()
	return err
}

// waitAll waits for every agent's goroutine to end, at most d in all.
func waitAll(all []*Agent, d time.Duration) {
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
