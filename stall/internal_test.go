package stall

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/exp/trace"
)

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		env     string
		opts    Options
		on      bool
		budget  time.Duration
		wantErr bool
	}{
		{env: "", on: true, budget: frame60Hz},
		{env: "", opts: Options{Budget: 5 * time.Millisecond}, on: true, budget: 5 * time.Millisecond},
		{env: "", opts: Options{Budget: -1}, on: true, budget: frame60Hz},
		{env: "", opts: Options{EnvOnly: true}, on: false, budget: frame60Hz},
		{env: " 1 ", opts: Options{EnvOnly: true}, on: true, budget: frame60Hz},
		{env: "on", opts: Options{EnvOnly: true}, on: true, budget: frame60Hz},
		{env: "off", on: false, budget: frame60Hz},
		{env: "0", on: false, budget: frame60Hz},
		{env: "budget=8ms", opts: Options{Budget: time.Second, EnvOnly: true}, on: true, budget: 8 * time.Millisecond},
		{env: "budget=0s", wantErr: true},
		{env: "budget=x", wantErr: true},
		{env: "true", wantErr: true},
	} {
		got, on, err := tc.opts.resolve(tc.env)
		if tc.wantErr {
			assert.ErrorContains(t, err, envVar, "OFFMAIN_STALL=%q", tc.env)
			assert.False(t, on, "on with OFFMAIN_STALL=%q", tc.env)
			continue
		}
		require.NoError(t, err, "OFFMAIN_STALL=%q", tc.env)
		assert.Equal(t, tc.on, on, "on with OFFMAIN_STALL=%q and %+v", tc.env, tc.opts)
		assert.Equal(t, tc.budget, got.Budget, "budget with OFFMAIN_STALL=%q and %+v", tc.env, tc.opts)
	}
}

func TestPkgOfAndLayer(t *testing.T) {
	for _, tc := range []struct {
		fn, pkg string
		layer   bool
	}{
		{"os.(*File).Read", "os", true},
		{"internal/poll.(*FD).Read", "internal/poll", true},
		{"encoding/json.(*Decoder).refill", "encoding/json", true},
		{"syscall.read", "syscall", true},
		{"golang.org/x/sys/unix.Fsync", "golang.org/x/sys/unix", true},
		{"main.loadState", "main", false},
		{"main.main.func1", "main", false},
		{"example.com/app/ui.(*Menu).open", "example.com/app/ui", false},
		{"github.com/offmain/offmain/stall_test.TestSlowRead.func1", "github.com/offmain/offmain/stall_test", false},
		{"gopkg.in/yaml%2ev3.Unmarshal", "gopkg.in/yaml%2ev3", false}, // the linker escapes a dot in the last element
	} {
		assert.Equal(t, tc.pkg, pkgOf(tc.fn), "package of %s", tc.fn)
		assert.Equal(t, tc.layer, layer(tc.fn), "%s is a layer", tc.fn)
	}
}

func stack(fns ...string) []runtime.Frame {
	fs := make([]runtime.Frame, len(fns))
	for i, fn := range fns {
		fs[i] = runtime.Frame{Function: fn, PC: uintptr(i + 1)}
	}
	return fs
}

func TestFromSite(t *testing.T) {
	fs := stack("syscall.read", "internal/poll.(*FD).Read", "os.(*File).Read", "encoding/json.(*Decoder).refill", "main.load", "main.main", "runtime.main")
	assert.Equal(t, "main.load", fromSite(fs)[0].Function)
	assert.Len(t, fromSite(fs), 3)
	all := stack("runtime.gopark", "runtime.goexit")
	assert.Equal(t, all, fromSite(all), "a stack with no frame outside the layers")
}

func TestSyscallName(t *testing.T) {
	for _, tc := range []struct {
		goos string
		fs   []runtime.Frame
		want string
	}{
		{"linux", stack("syscall.read", "syscall.Read", "main.f"), "read"},
		{"linux", stack("syscall.Syscall", "syscall.Fsync", "os.(*File).Sync"), "fsync"},
		{"linux", stack("internal/runtime/syscall/linux.Syscall6", "syscall.RawSyscall6", "syscall.Syscall6", "internal/syscall/unix.Fstatat", "os.statNolog"), "fstatat"},
		{"darwin", stack("syscall.syscall", "syscall.read", "syscall.Read"), "read"},
		{"windows", stack("syscall.SyscallN", "syscall.Syscall6", "syscall.readFile", "syscall.ReadFile", "syscall.Read"), "ReadFile"},
		{"windows", stack("syscall.SyscallN", "syscall.FlushFileBuffers", "os.(*File).Sync"), "FlushFileBuffers"},
		{"linux", stack("main.f"), ""},
	} {
		assert.Equal(t, tc.want, syscallName(tc.fs, tc.goos), "%s: %v", tc.goos, tc.fs)
	}
}

func TestCgo(t *testing.T) {
	assert.True(t, cgo(stack("github.com/go-gl/glfw/v3.3/glfw._Cfunc_glfwPollEvents", "github.com/go-gl/glfw/v3.3/glfw.PollEvents")))
	assert.False(t, cgo(stack("syscall.SyscallN", "syscall.ReadFile")))
}

func TestLimiter(t *testing.T) {
	l := limiter{}
	ms := func(n int) trace.Time { return trace.Time(n * int(time.Millisecond)) }
	for i, tc := range []struct {
		site    uint64
		at      trace.Time
		ok      bool
		dropped int
	}{
		{1, ms(0), true, 0},
		{1, ms(100), false, 0},
		{2, ms(150), true, 0}, // another site
		{1, ms(999), false, 0},
		{1, ms(1000), true, 2},
		{1, ms(1500), false, 0},
		{1, ms(2500), true, 1},
	} {
		dropped, ok := l.allow(tc.site, tc.at)
		assert.Equal(t, tc.ok, ok, "wait %d allowed", i)
		assert.Equal(t, tc.dropped, dropped, "wait %d: dropped", i)
	}
}

func TestReportString(t *testing.T) {
	r := Report{Duration: 51234 * time.Microsecond, Wait: waitSyscall, Syscall: "read", Path: "/a/state.json",
		Stack: []runtime.Frame{{Function: "main.load", File: "/src/main.go", Line: 12}}, Dropped: 3}
	assert.Equal(t, "stall: 51.23ms in read(2) on /a/state.json (3 more at this site not reported)\n\tmain.load\n\t\t/src/main.go:12", r.String())
	r = Report{Duration: 2 * time.Second, Wait: waitSyscall, Syscall: "ReadFile", Ongoing: true}
	assert.Equal(t, "stall: 2s in ReadFile, still waiting", r.String())
	r = Report{Duration: 20 * time.Millisecond, Wait: "sync"}
	assert.Equal(t, "stall: 20ms in sync", r.String())
}

// A call that never blocks, or a block reason that is the scheduler's or
// the collector's, is no stall of the app's: a long one was the thread or
// goroutine waiting for a CPU.
func TestNotAWait(t *testing.T) {
	clock := []runtime.Frame{
		{Function: "golang.org/x/sys/unix.ClockGettime"},
		{Function: "example.com/app.frame"},
	}
	assert.Equal(t, "clock_gettime", syscallName(clock, "linux"), "the manual page's name")
	assert.True(t, neverBlocks[syscallName(clock, "linux")])
	read := []runtime.Frame{{Function: "syscall.read"}, {Function: "example.com/app.load"}}
	assert.False(t, neverBlocks[syscallName(read, "linux")])
	for _, r := range []string{"preempted", "runtime.Gosched", "wait until GC ends"} {
		assert.True(t, notWaiting[r], r)
	}
	for _, r := range []string{"sync", "chan receive", "select", "sleep", "sync.(*Cond).Wait"} {
		assert.False(t, notWaiting[r], r)
	}
}
