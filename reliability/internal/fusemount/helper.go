//go:build linux

package fusemount

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/trace"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/oneline"
)

// A Server is a filesystem a helper process serves, as its [ServeFunc]
// returned it.
type Server interface {
	// Call answers a call the parent made with [Process.Call]. Calls come
	// one at a time, in the order the parent made them.
	Call(method string, args json.RawMessage) (result any, err error)
	// Unmount ends the filesystem: it is called once, when the parent asks
	// for it, or when the parent has died.
	Unmount() error
}

// A ServeFunc mounts a filesystem at mountpoint over backing, with the
// configuration the parent gave [Start], and serves it until its Server's
// Unmount. notify sends the parent an event (see [Start]); it may be
// called from any goroutine, and arg is encoded with encoding/json.
type ServeFunc func(mountpoint, backing string, config json.RawMessage, notify func(event string, arg any)) (Server, error)

// Helper makes this process a helper for kind when [Start] started it as
// one: it then serves the filesystem serve mounts, answers the parent's
// calls, and exits when the parent asks it to unmount or dies, never
// returning. In any other process it returns at once.
//
// Call it from an init function of the package that implements kind, so
// that every test binary linking that package can be re-executed as its
// helper: the package's own variables are initialised by then, and the
// test's TestMain and flags are never reached.
func Helper(kind string, serve ServeFunc) {
	if os.Getenv(envKind) != kind {
		return
	}
	if err := runHelper(serve); err != nil {
		fmt.Fprintf(os.Stderr, "fusemount: %s helper: %v\n", kind, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// helper is the helper side of the protocol.
type helper struct {
	wmu sync.Mutex // serialises writes to enc
	enc *json.Encoder

	srv      Server
	fr       *trace.FlightRecorder // with EnvTrace set
	traceDir string
	traces   int
	shutOnce sync.Once
	shutErr  error
}

func runHelper(serve ServeFunc) error {
	in, out, err := takeStdio()
	if err != nil {
		return err
	}
	// Caught from the start: a parent that dies while the helper mounts
	// must find it unmounting, not killed by SIGTERM's default action.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	parent, _ := strconv.Atoi(os.Getenv(envParent))
	if os.Getppid() != parent {
		return fmt.Errorf("parent %d gone before the helper started", parent)
	}
	h := &helper{enc: json.NewEncoder(out)}
	dec := json.NewDecoder(in)
	var m message
	if err := dec.Decode(&m); err != nil || m.Method != methodMount {
		return fmt.Errorf("first message %+v, %v: want a mount call", m, err)
	}
	var args mountArgs
	if err := json.Unmarshal(m.Args, &args); err != nil {
		return err
	}
	if h.srv, err = serve(args.Dir, args.Backing, args.Config, h.notify); err != nil {
		return h.reply(m.ID, nil, err)
	}
	if err := h.reply(m.ID, nil, nil); err != nil {
		return oneline.Join(err, h.shutdown())
	}
	go h.watchParent(sig, parent)
	if dir := os.Getenv(EnvTrace); dir != "" {
		h.fr = trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: 90 * time.Second, MaxBytes: 256 << 20})
		if err := h.fr.Start(); err != nil {
			return oneline.Join(fmt.Errorf("%s: %w", EnvTrace, err), h.shutdown())
		}
		h.traceDir = dir
	}
	return h.serveCalls(dec)
}

// EnvTrace names a directory: with it set, a helper keeps a flight
// recording of its execution trace (runtime/trace) and writes it there,
// as helper-<pid>-<n>.trace, each time the parent asks for its
// [Process.Stacks], so that a hang seen once in hours can be read in go
// tool trace from both sides.
const EnvTrace = "OFFMAIN_FUSE_TRACE"

// writeTrace writes the flight recording, if one is kept, and says where.
func (h *helper) writeTrace() string {
	if h.fr == nil {
		return ""
	}
	h.traces++
	name := filepath.Join(h.traceDir, fmt.Sprintf("helper-%d-%d.trace", os.Getpid(), h.traces))
	f, err := os.Create(name)
	if err != nil {
		return "\nflight recording: " + err.Error()
	}
	_, err = h.fr.WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "\nflight recording: " + err.Error()
	}
	return "\nflight recording of the helper: " + name
}

// serveCalls answers the parent's calls until it asks to unmount or its
// end of the pipe closes (it died, or gave up on the helper).
func (h *helper) serveCalls(dec *json.Decoder) error {
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			if err == io.EOF {
				return h.shutdown() // the parent is gone: leave nothing mounted
			}
			return oneline.Join(fmt.Errorf("reading a call: %w", err), h.shutdown())
		}
		var result any
		var err error
		switch m.Method {
		case methodUnmount:
			err := h.shutdown()
			return h.reply(m.ID, nil, err)
		case methodStacks:
			result = Stacks() + h.writeTrace()
		default:
			result, err = h.srv.Call(m.Method, m.Args)
		}
		if err := h.reply(m.ID, result, err); err != nil {
			return oneline.Join(err, h.shutdown())
		}
	}
}

// watchParent unmounts and exits when the parent dies. [Start] asks the
// kernel for SIGTERM at the parent's death (PR_SET_PDEATHSIG, prctl(2)),
// a backstop for the end of the pipe that the parent's death also brings.
// The kernel sends that signal when the thread that forked the helper
// exits, not only the process (go.dev/issue/27505: the Go runtime ends a
// thread whose goroutine exits locked to it), so a SIGTERM while the
// parent is still this process's parent is ignored.
func (h *helper) watchParent(sig <-chan os.Signal, parent int) {
	for range sig {
		if os.Getppid() != parent {
			err := h.shutdown()
			if err != nil {
				fmt.Fprintf(os.Stderr, "fusemount: helper: parent died; unmount: %v\n", err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
}

// shutdown unmounts once; later calls return the same error.
func (h *helper) shutdown() error {
	h.shutOnce.Do(func() { h.shutErr = h.srv.Unmount() })
	return h.shutErr
}

func (h *helper) reply(id uint64, result any, err error) error {
	m := message{ID: id, Err: toWire(err)}
	if result != nil {
		b, merr := json.Marshal(result)
		if merr != nil {
			m.Err = toWire(fmt.Errorf("fusemount: encoding the result: %w", merr))
		}
		m.Args = b
	}
	return h.write(m)
}

// notify sends an event; an error (the parent is gone) is dropped, as the
// end of the pipe shuts the helper down anyway.
func (h *helper) notify(event string, arg any) {
	b, err := json.Marshal(arg)
	if err != nil {
		panic(fmt.Sprintf("fusemount: event %s: %v", event, err))
	}
	_ = h.write(message{Event: event, Args: b})
}

func (h *helper) write(m message) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	return h.enc.Encode(m)
}

// takeStdio moves the pipes on descriptors 0 and 1 to new descriptors for
// the protocol, and puts /dev/null on 0 and the standard error on 1, so
// that nothing else in the process can read a call or garble a reply.
func takeStdio() (in, out *os.File, err error) {
	inFd, err := unix.FcntlInt(0, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, nil, err
	}
	outFd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, nil, err
	}
	null, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.Dup3(null, 0, 0); err != nil {
		return nil, nil, err
	}
	unix.Close(null)
	if err := unix.Dup3(2, 1, 0); err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(inFd), "fusemount-calls"), os.NewFile(uintptr(outFd), "fusemount-replies"), nil
}
