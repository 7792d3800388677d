//go:build linux

package powercut

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/offmain/offmain/reliability/internal/fusemount"
)

// Writer saves values through the code under test: one per power cycle,
// made by [Subject.Open]. A Torture calls it from one goroutine.
type Writer interface {
	// Save saves v (v > 0), or removes the file (v == 0). It may return
	// before v is on the disk.
	Save(v int) error
	// Flush returns nil only if every Save before it is durable: this is
	// the claim a Torture checks.
	Flush(ctx context.Context) error
	// Close releases the writer. After a cut it is called while every
	// operation fails with EIO; it must still end every goroutine the
	// writer started.
	Close(ctx context.Context) error
}

// Subject is the code under test.
type Subject struct {
	// Open opens a Writer on dir after power-on, as an app does at start,
	// and returns the value the file holds: 0 for no file. It returns an
	// error matching [ErrTorn], with a working Writer, when the file is
	// there but does not hold a whole value; any other error ends the
	// Torture.
	Open func(dir string) (Writer, int, error)
	// Leftover reports whether a name in dir, listed after Open, is a
	// leftover of a crash that Open should have swept.
	Leftover func(name string) bool
}

// ErrTorn is matched by the error [Subject.Open] returns for a file that
// does not hold a whole value.
var ErrTorn = errors.New("powercut: torn file")

// Config configures a [Torture]. The zero value is the default for every
// field.
type Config struct {
	Cuts        int    // power cycles; zero means 1,000
	Seed        uint64 // seeds the stream, the flushes and the cut points; zero is a seed too
	MaxOps      int    // the cut comes at a counted operation drawn from 1 to MaxOps; zero means 40
	FlushEvery  int    // a Flush follows a Save with chance 1/FlushEvery; zero means 4
	RemoveEvery int    // a remove instead of a save with chance 1/RemoveEvery; zero means never

	// HangGuard is how long a cycle may save and flush until its cut,
	// and then how long its Close may take, before the cycle counts as a
	// hang (Counts.Hangs); zero means a minute.
	HangGuard time.Duration
}

// Counts is what a Torture found. Acked counts the flushes that returned
// nil; Lost, the cuts after which the file was missing although a flush
// had acknowledged a value; Older, those after which it held a value older
// than the last acknowledged one; Torn, those after which it did not hold
// a whole value, or held one never saved; Leftovers, the crash leftovers
// that the next Open did not sweep.
type Counts struct {
	Cuts, Acked, Lost, Older, Torn, Leftovers int

	// Hangs counts the cycles whose Flushes, or whose Close, were still
	// waiting after Config.HangGuard. The context they wait with is
	// cancelled only once every goroutine's stack and what /proc says of
	// every thread, in this process and the helper, have been taken, so
	// the report shows them still waiting; the cycle is then cut at once.
	// The Close has a HangGuard of its own, so that a writer stuck in the
	// flushes ends before the power comes back rather than writing into
	// the next cycle. The report also gives the guard's time second by
	// second (see timeline) and the torture's last steps. Each is in
	// Faults.
	Hangs int

	// DaemonStalls counts the cycles that would have counted as hangs
	// but in which, for the last half of the guard or more, one thread of
	// this process waited for the FUSE daemon's answer
	// (request_wait_answer) in every sample without being scheduled once,
	// and the daemon counted no operation: the writer had made its system
	// call and the helper did not answer it, which no writer can cause or
	// cure (see timeline.stalled). Each is in Faults too, with the same
	// report as a hang.
	DaemonStalls int

	// Faults describes the first maxFaults cuts counted in Lost, Older,
	// Torn, Leftovers, Hangs or DaemonStalls: the cut's number, what was
	// found, the cycle's history and the directory's names, so that a
	// failure found once in 20,000 cuts can be read without replaying it.
	Faults []string
}

// maxFaults bounds Counts.Faults.
const maxFaults = 10

// String returns the counts as "cuts=N acked=N lost=N older=N torn=N
// leftovers=N hangs=N daemon-stalls=N".
func (c Counts) String() string {
	return fmt.Sprintf("cuts=%d acked=%d lost=%d older=%d torn=%d leftovers=%d hangs=%d daemon-stalls=%d",
		c.Cuts, c.Acked, c.Lost, c.Older, c.Torn, c.Leftovers, c.Hangs, c.DaemonStalls)
}

// Torture runs cfg.Cuts power cycles of s in dir, a directory on fsys. In
// each it opens a Writer, saves a stream of values (each new, counting up)
// with Flushes at random, and cuts at a random counted operation; it then
// closes the Writer, powers on and checks what the next Open reads: the
// value of a Save made at or after the last acknowledged one, or no file
// if such a Save was a remove. It returns an error only when the harness
// itself fails (an Open error other than ErrTorn, a PowerOn that fails).
func Torture(fsys *FS, dir string, s Subject, cfg Config) (Counts, error) {
	t := &torture{fsys: fsys, dir: dir, s: s, cfg: cfg.withDefaults(),
		rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed+1))}
	t.tl = startTimeline(fsys.proc.Pid(), fsys.Ops)
	defer t.tl.end()
	if dir := os.Getenv(EnvTrace); dir != "" {
		// A hang is rare (a few in 20,000 cuts): keep the last stretch of
		// the execution trace and write it out only for one.
		t.fr = trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: t.cfg.HangGuard + 15*time.Second, MaxBytes: 256 << 20})
		if err := t.fr.Start(); err != nil {
			return t.counts, fmt.Errorf("powercut: %s: %w", EnvTrace, err)
		}
		t.traceDir = dir
		defer t.fr.Stop()
	}
	w, v, err := s.Open(dir)
	if err != nil && !errors.Is(err, ErrTorn) {
		return t.counts, err
	}
	for range t.cfg.Cuts {
		if err := t.cycle(w, v); err != nil {
			return t.counts, err
		}
		if w, v, err = t.reopen(); err != nil {
			return t.counts, err
		}
	}
	// The last Close is bounded like a cycle's, so that a hang fails the
	// test instead of stalling it.
	ctx, cancel := context.WithTimeout(context.Background(), t.cfg.HangGuard)
	defer cancel()
	return t.counts, w.Close(ctx)
}

type torture struct {
	fsys   *FS
	dir    string
	s      Subject
	cfg    Config
	rng    *rand.Rand
	seq    int
	hist   []int // the file's states in this cycle: the value at power-on, then each Save
	acked  int   // the index in hist of the last state a Flush acknowledged
	counts Counts

	stepMu   sync.Mutex            // protects steps and nsteps, which the guard's timer reads
	tl       *timeline             // what the kernel said of both processes, each second
	steps    [stepsKept]stepRecord // the last steps, for a hang's report
	inFlight *stepRecord           // the step being made, if any
	nsteps   int
	fr       *trace.FlightRecorder // with EnvTrace set
	traceDir string
}

// EnvTrace names a directory: with it set, a Torture keeps a flight
// recording of its process's execution trace (runtime/trace) and writes
// it there for each hang, as hang-<pid>-cut<N>-<flush|close>.trace, for
// go tool trace;
// the helper does the same when the hang's stacks are taken
// ([fusemount.EnvTrace]).
const EnvTrace = fusemount.EnvTrace

// stepsKept is how many of its last steps a hang's report lists.
const stepsKept = 48

// stepRecord is one Save, or one Flush, as the torture made it.
type stepRecord struct {
	at   time.Time
	v    int // the value saved, 0 a remove; -1 a Flush
	took time.Duration
	ops  uint64 // the operations counted before it
	err  string // its error's text, "ok" for none: formatted by the torture, not the guard's goroutine
}

func (c Config) withDefaults() Config {
	if c.Cuts <= 0 {
		c.Cuts = 1000
	}
	if c.MaxOps <= 0 {
		c.MaxOps = 40
	}
	if c.FlushEvery <= 0 {
		c.FlushEvery = 4
	}
	if c.HangGuard <= 0 {
		c.HangGuard = time.Minute
	}
	return c
}

// cycle saves through w until the armed cut, then closes w and powers on.
func (t *torture) cycle(w Writer, start int) error {
	t.hist, t.acked = []int{start}, 0
	cuts := t.fsys.Cuts()
	armed := t.fsys.Arm(Trigger{N: 1 + t.rng.IntN(t.cfg.MaxOps)})
	g := t.guard("flush")
	for i := 0; ; i++ {
		if t.cut(cuts, armed) {
			flushStacks, hang, stalled := g.end()
			// The Close gets a guard of its own: a writer still stuck
			// must end before the power comes back, or it writes into
			// the next cycle through the mount's root, the one node that
			// outlives a cut.
			cg := t.guard("close")
			_ = w.Close(cg.ctx) // it fails after a cut: its writes get EIO
			closeStacks, closeHang, closeStalled := cg.end()
			t.counts.Cuts++
			switch {
			case hang:
				t.fault(fmt.Sprintf("%s: the flushes waited over %v\n%s\nafter the Close: scheduler: %s\nthread cpu/wait ms: %s",
					t.countHang(stalled), t.cfg.HangGuard, flushStacks, fusemount.SchedStats(), fusemount.ThreadTimes()))
			case closeHang:
				t.fault(fmt.Sprintf("%s: the Close waited over %v\n%s", t.countHang(closeStalled), t.cfg.HangGuard, closeStacks))
			}
			return t.fsys.PowerOn()
		}
		// A writer that stopped writing, or flushes that hung: cut now.
		if i == 1000 || g.ctx.Err() != nil {
			t.fsys.Cut()
		}
		t.step(g.ctx, w)
	}
}

// countHang counts a hang, or a daemon stall if stalled, and names it.
func (t *torture) countHang(stalled bool) string {
	if stalled {
		t.counts.DaemonStalls++
		return "daemon stall"
	}
	t.counts.Hangs++
	return "hang"
}

// hangGuard bounds what a cycle waits for: its ctx is cancelled
// Config.HangGuard after it was made, once the stacks of both processes
// are taken. They are taken first so that they show what still waits: a
// Flush released by the cancel goes on at once, and stacks taken after it
// would show the torture saving again.
type hangGuard struct {
	ctx     context.Context
	cancel  context.CancelFunc
	timer   *time.Timer
	stacks  chan string // the timer's report; sent after the cancel, as its last act
	stalled bool        // set by the timer before it sends its report: see Counts.DaemonStalls
}

func (t *torture) guard(what string) *hangGuard {
	ctx, cancel := context.WithCancel(context.Background())
	g := &hangGuard{ctx: ctx, cancel: cancel, stacks: make(chan string, 1)}
	start := time.Now()
	g.timer = time.AfterFunc(t.cfg.HangGuard, func() {
		// Judged on the samples before the report: a stall was seen to
		// end as its guard fired, and the report stops the world of
		// both processes.
		g.stalled = t.tl.stalled(start, t.cfg.HangGuard/2)
		s := stacks(t.fsys) + "\n" + t.tl.report(start) + t.stepReport() + t.writeTrace(what)
		cancel()
		g.stacks <- s
	})
	return g
}

// end stops g and reports whether its time ran out, with the stacks its
// timer took then and whether the daemon had stalled. It waits for that
// timer's goroutine to finish.
func (g *hangGuard) end() (report string, hang, stalled bool) {
	defer g.cancel()
	if g.timer.Stop() {
		return "", false, false
	}
	report = <-g.stacks
	return report, true, g.stalled
}

// cut reports whether the cycle's cut has come: the helper's count of
// cuts has moved on from cuts, as it does before the operation that cut
// returns, or armed is closed, as it is when the helper has exited. The
// channel alone would come later, when this process has read the
// helper's event: meanwhile the torture would go on saving, and take for
// acknowledged a Flush that did no more than report the earlier state.
func (t *torture) cut(cuts int, armed <-chan struct{}) bool {
	if t.fsys.Cuts() != cuts {
		return true
	}
	select {
	case <-armed:
		return true
	default:
		return false
	}
}

// step saves the next value, or removes, and flushes at random.
func (t *torture) step(ctx context.Context, w Writer) {
	t.seq++
	v := t.seq
	if t.cfg.RemoveEvery > 0 && t.rng.IntN(t.cfg.RemoveEvery) == 0 {
		v = 0
	}
	start, ops := time.Now(), t.fsys.Ops()
	t.begin(stepRecord{at: start, v: v, ops: ops})
	err := w.Save(v)
	t.record(stepRecord{at: start, v: v, took: time.Since(start), ops: ops, err: errText(err)})
	if err != nil {
		return // cut already: the save did not happen
	}
	t.hist = append(t.hist, v)
	if t.rng.IntN(t.cfg.FlushEvery) != 0 {
		return
	}
	start, ops = time.Now(), t.fsys.Ops()
	t.begin(stepRecord{at: start, v: -1, ops: ops})
	err = w.Flush(ctx)
	t.record(stepRecord{at: start, v: -1, took: time.Since(start), ops: ops, err: errText(err)})
	if err == nil {
		t.acked = len(t.hist) - 1
		t.counts.Acked++
	}
}

// errText returns err's text, or "ok" for nil.
func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// record keeps s among the last steps. The hang guard's timer reads
// them while the step that hangs has not returned, so only steps already
// made are read; the write of the one in flight comes after the guard
// has ended.
func (t *torture) record(s stepRecord) {
	t.stepMu.Lock()
	t.steps[t.nsteps%stepsKept] = s
	t.nsteps++
	t.inFlight = nil
	t.stepMu.Unlock()
}

// begin notes the step about to be made, which the report shows as in
// flight until record keeps it.
func (t *torture) begin(s stepRecord) {
	t.stepMu.Lock()
	t.inFlight = &s
	t.stepMu.Unlock()
}

// stepReport lists the last steps: when each began, what it was, how
// long it took, the operations counted when it began, and its error.
func (t *torture) stepReport() string {
	t.stepMu.Lock()
	defer t.stepMu.Unlock()
	var b strings.Builder
	b.WriteString("last steps of the torture (start, step, took, ops counted at its start, error):\n")
	for i := max(0, t.nsteps-stepsKept); i < t.nsteps; i++ {
		s := t.steps[i%stepsKept]
		what := fmt.Sprintf("save %d", s.v)
		switch s.v {
		case -1:
			what = "flush"
		case 0:
			what = "remove"
		}
		fmt.Fprintf(&b, "  %s %-12s %10v ops=%d %v\n", s.at.Format("15:04:05.000000"), what, s.took.Round(time.Microsecond), s.ops, s.err)
	}
	if s := t.inFlight; s != nil {
		what := "flush"
		if s.v >= 0 {
			what = fmt.Sprintf("save %d", s.v)
		}
		fmt.Fprintf(&b, "  %s %-12s in flight for %v, ops=%d at its start, %d now\n", s.at.Format("15:04:05.000000"), what,
			time.Since(s.at).Round(time.Millisecond), s.ops, t.fsys.Ops())
	}
	return b.String()
}

// writeTrace writes the flight recording, if one is kept, and says where.
func (t *torture) writeTrace(what string) string {
	if t.fr == nil {
		return ""
	}
	// Named for the cut the fault will carry (Cuts is counted after the
	// guards end) and for the guard, as both may fire in one cycle.
	name := filepath.Join(t.traceDir, fmt.Sprintf("hang-%d-cut%d-%s.trace", os.Getpid(), t.counts.Cuts+1, what))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "flight recording: " + err.Error() + "\n"
	}
	_, err = t.fr.WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "flight recording: " + err.Error() + "\n"
	}
	return "flight recording of this process: " + name + "\n"
}

// reopen opens a Writer after power-on and checks what it read.
func (t *torture) reopen() (Writer, int, error) {
	w, v, err := t.s.Open(t.dir)
	switch {
	case errors.Is(err, ErrTorn):
		t.counts.Torn++
		msg := err.Error()
		if r := []rune(msg); len(r) > 300 {
			msg = string(r[:300]) + "…"
		}
		t.fault("torn: " + msg)
	case err != nil:
		return nil, 0, err
	default:
		t.check(v)
	}
	return w, v, t.sweepCheck()
}

// check compares the value read after the cut with this cycle's history.
func (t *torture) check(v int) {
	j := slices.Index(t.hist[t.acked:], v)
	switch {
	case j >= 0:
		return
	case v == 0:
		t.counts.Lost++
		t.fault("lost: no file")
	case slices.Contains(t.hist[:t.acked], v):
		t.counts.Older++
		t.fault(fmt.Sprintf("older: read %d", v))
	default:
		t.counts.Torn++
		t.fault(fmt.Sprintf("torn: read %d, never saved in this cycle", v))
	}
}

// sweepCheck counts the crash leftovers still in the directory.
func (t *torture) sweepCheck() error {
	entries, err := os.ReadDir(t.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if t.s.Leftover != nil && t.s.Leftover(e.Name()) {
			t.counts.Leftovers++
			t.fault("leftover: " + e.Name())
		}
	}
	return nil
}

// fault records what a bad cut found, with the cycle's history (the value
// at power-on, then each save; 0 a remove), the last acknowledged state,
// and the directory's names now.
func (t *torture) fault(what string) {
	if len(t.counts.Faults) >= maxFaults {
		return
	}
	var names []string
	if entries, err := os.ReadDir(t.dir); err == nil {
		for _, e := range entries {
			names = append(names, e.Name())
		}
	}
	t.counts.Faults = append(t.counts.Faults, fmt.Sprintf("cut %d: %s; history %v, acknowledged %v (index %d); names %q",
		t.counts.Cuts, what, t.hist, t.hist[t.acked], t.acked, names))
}

// stacks returns what the hang report shows of both processes: every
// goroutine's stack and every thread's state (fusemount.Stacks), in this
// process and in the helper serving fsys.
func stacks(fsys *FS) string {
	return "test process:\n" + fusemount.Stacks() +
		fmt.Sprintf("\nhelper process (pid %d), serving the mount:\n", fsys.proc.Pid()) + fsys.proc.Stacks()
}
