//go:build linux

package fusemount

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/mountinfo"
	"github.com/offmain/offmain/internal/oneline"
)

// ErrHelperExited is matched by the error of a call to a helper that has
// exited, or that exits before answering.
var ErrHelperExited = errors.New("fusemount: the helper process exited")

// helperWait bounds how long [Process.Unmount] waits for the helper to
// unmount and exit before it kills it: far above the 0.3 s of go-fuse's
// busy-unmount retries, for a loaded machine.
const helperWait = 30 * time.Second

// A Process is a filesystem served by a helper process: this test binary
// re-executed (see [Helper]). Its methods are safe for concurrent use.
type Process struct {
	kind, dir, backing string
	cmd                *exec.Cmd
	stderr             tail
	events             func(event string, arg json.RawMessage)
	read               chan struct{} // closed when the helper's replies have ended

	wmu   sync.Mutex // serialises writes to calls
	calls io.WriteCloser
	enc   *json.Encoder

	mu      sync.Mutex            // protects the fields below
	next    uint64                // the last call's ID
	pending map[uint64]chan reply // the calls not answered yet
	gone    error                 // why the helper can answer no more, once it cannot

	once sync.Once
	err  error // Unmount's result
}

type reply struct {
	result json.RawMessage
	err    error
}

// Start starts a helper process for kind (a [Helper] of the test binary),
// which mounts at mountpoint a filesystem over backing, configured by
// config (encoded with encoding/json and given to the helper's
// [ServeFunc]). The caller must call [Process.Unmount].
//
// events, if not nil, receives the helper's events in the order it sent
// them, from one goroutine, and must not block; after the last it is
// called once with event "", when the helper has exited.
//
// The helper gets SIGTERM when this process dies (PR_SET_PDEATHSIG), and
// sees its calls end at the same time; either way it unmounts and exits,
// so that no helper outlives its test binary, even one killed with
// SIGKILL. It runs in its own process group, so that a terminal's Ctrl-C
// reaches only the test binary, whose death then ends the helper.
func Start(kind, mountpoint, backing string, config any, events func(event string, arg json.RawMessage)) (*Process, error) {
	cfg, err := json.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%s: starting the helper: %w", kind, err)
	}
	p := &Process{kind: kind, dir: mountpoint, backing: backing, events: events,
		read: make(chan struct{}), pending: map[uint64]chan reply{}}
	// -test.run matches nothing, should a binary without the Helper run.
	p.cmd = exec.Command(exe, "-test.run=^$")
	p.cmd.Env = append(os.Environ(), envKind+"="+kind, envParent+"="+strconv.Itoa(os.Getpid()),
		// A -race binary sleeps 1 s before it exits, for its other
		// threads to report races (the race runtime's atexit_sleep_ms):
		// every Unmount would wait that second.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	p.cmd.Stderr = &p.stderr
	p.cmd.WaitDelay = helperWait
	if p.calls, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	replies, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.enc = json.NewEncoder(p.calls)
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: starting the helper: %w", kind, err)
	}
	go p.readReplies(replies)
	if err := p.callTimeout(methodMount, mountArgs{Dir: mountpoint, Backing: backing, Config: cfg}); err != nil {
		return nil, oneline.Join(err, p.end(false))
	}
	return p, nil
}

// Dir returns the mount point.
func (p *Process) Dir() string { return p.dir }

// Backing returns the backing directory the helper was given.
func (p *Process) Backing() string { return p.backing }

// Pid returns the helper's process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Call calls method in the helper with args and decodes its result into
// result, unless result is nil. It returns the helper's error (whose
// errno, if it wrapped one, errors.Is still finds), or an error matching
// [ErrHelperExited] if the helper exits first.
func (p *Process) Call(method string, args, result any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", p.kind, method, err)
	}
	ch := make(chan reply, 1)
	p.mu.Lock()
	if p.gone != nil {
		p.mu.Unlock()
		return fmt.Errorf("%s: %s: %w", p.kind, method, p.gone)
	}
	p.next++
	id := p.next
	p.pending[id] = ch
	p.mu.Unlock()

	p.wmu.Lock()
	err = p.enc.Encode(message{ID: id, Method: method, Args: raw})
	p.wmu.Unlock()
	if err != nil {
		// The helper is gone, or going: readReplies ends and answers ch.
		err = fmt.Errorf("%s: %s: %w", p.kind, method, ErrHelperExited)
	}
	r := <-ch
	if err == nil && r.err != nil {
		err = r.err
	}
	if err == nil && result != nil {
		err = json.Unmarshal(r.result, result)
	}
	return err
}

// Stacks returns the helper's [Stacks], or why it cannot. It waits at
// most stacksTimeout: a hang report must come even from a helper that
// does not answer (stopped, or wedged); its call then ends when the
// helper answers or exits.
func (p *Process) Stacks() string {
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var r result
		r.err = p.Call(methodStacks, nil, &r.s)
		ch <- r
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err.Error()
		}
		return r.s
	case <-time.After(stacksTimeout):
		return fmt.Sprintf("%s: the helper did not answer its stacks call within %v", p.kind, stacksTimeout)
	}
}

// stacksTimeout bounds [Process.Stacks].
const stacksTimeout = 20 * time.Second

// readReplies hands each reply to its call and each event to p.events
// until the helper's output ends, then fails the calls still waiting.
func (p *Process) readReplies(r io.Reader) {
	defer close(p.read)
	dec := json.NewDecoder(r)
	gone := fmt.Errorf("%w (pid %d)", ErrHelperExited, p.cmd.Process.Pid)
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			if err != io.EOF {
				// Garbage on the pipe: the helper is cut off, and ends
				// when Unmount closes its input.
				gone = fmt.Errorf("%w (pid %d): reading its replies: %v", ErrHelperExited, p.cmd.Process.Pid, err)
			}
			break
		}
		if m.Event != "" {
			if p.events != nil {
				p.events(m.Event, m.Args)
			}
			continue
		}
		p.mu.Lock()
		ch := p.pending[m.ID]
		delete(p.pending, m.ID)
		p.mu.Unlock()
		if ch != nil {
			r := reply{result: m.Args}
			if m.Err != nil {
				r.err = m.Err.err()
			}
			ch <- r
		}
	}
	p.mu.Lock()
	p.gone = gone
	for id, ch := range p.pending {
		ch <- reply{err: fmt.Errorf("%s: %w", p.kind, p.gone)}
		delete(p.pending, id)
	}
	p.mu.Unlock()
	if p.events != nil {
		p.events("", nil)
	}
}

// Unmount asks the helper to unmount and waits for it to exit. If a
// descriptor is still open on the mount, the helper aborts the FUSE
// connection and detaches the mount (see [Mount.Unmount]) and the error
// wraps EBUSY. If the helper died, or does not exit within 30 s (it is
// then killed), this process detaches the mount itself (umount2 with
// MNT_DETACH: a FUSE connection whose daemon died fails every request
// with ENOTCONN, fuse_abort_conn in fs/fuse/dev.c). An error matches
// [ErrHelperExited] if the helper did not exit with status 0, and then
// holds the end of its standard error. Either way nothing stays mounted
// and the helper has exited. Later calls return the same result.
func (p *Process) Unmount() error {
	p.once.Do(func() {
		err := p.callTimeout(methodUnmount, nil)
		p.err = oneline.Join(err, p.end(err == nil || !errors.Is(err, ErrHelperExited)))
	})
	return p.err
}

// callTimeout is Call bounded by helperWait, for the calls that mount and
// unmount: on the timeout it kills the helper, which ends the call.
func (p *Process) callTimeout(method string, args any) error {
	timer := time.AfterFunc(helperWait, func() { p.cmd.Process.Kill() })
	defer timer.Stop()
	return p.Call(method, args, nil)
}

// end closes the helper's input, waits for it to exit (killing it after
// helperWait) and, unless it unmounted, detaches the mount.
func (p *Process) end(unmounted bool) error {
	p.calls.Close()
	timer := time.AfterFunc(helperWait, func() { p.cmd.Process.Kill() })
	<-p.read
	timer.Stop()
	var err error
	if werr := p.cmd.Wait(); werr != nil {
		err = fmt.Errorf("%s: %w (pid %d): %v", p.kind, ErrHelperExited, p.cmd.Process.Pid, werr)
		if s := p.stderr.String(); s != "" {
			err = fmt.Errorf("%w; its stderr ends: %s", err, oneline.Fold(s))
		}
	}
	if unmounted || !topIsFUSE(p.dir) {
		return err
	}
	if derr := unix.Unmount(p.dir, unix.MNT_FORCE|unix.MNT_DETACH); derr != nil {
		return oneline.Join(err, fmt.Errorf("%s: detaching %s after its helper exited: %w", p.kind, p.dir, derr))
	}
	return oneline.Join(err, fmt.Errorf("%s: %s: %w; the mount was detached", p.kind, p.dir, ErrHelperExited))
}

// topIsFUSE reports whether the last filesystem mounted at dir, the one a
// path under dir reaches, is a FUSE one (its type in /proc/self/mountinfo
// is "fuse" or "fuse.<name>", proc(5)), so that a helper that died before
// it mounted does not make end detach what was mounted there before.
func topIsFUSE(dir string) bool {
	ms, err := mountinfo.Read()
	if err != nil {
		return false
	}
	top, ok := mountinfo.Top(ms, dir)
	return ok && (top.FSType == "fuse" || strings.HasPrefix(top.FSType, "fuse."))
}

// tail keeps the last 8 KiB written to it: the end of a helper's standard
// error, for the errors that report its exit.
type tail struct {
	mu sync.Mutex
	b  []byte
}

const tailMax = 8 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if over := len(t.b) - tailMax; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

// ServesFUSE reports whether the process pid holds a descriptor of
// /dev/fuse, as the daemon of every FUSE mount does: a test checks with it
// that it is not serving the mount it uses.
func ServesFUSE(pid int) (bool, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if target, err := os.Readlink(dir + "/" + e.Name()); err == nil && target == "/dev/fuse" {
			return true, nil
		}
	}
	return false, nil
}
