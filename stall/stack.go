package stall

import (
	"reflect"
	"runtime"
	"strings"

	"golang.org/x/exp/trace"
)

// toolkitIdle are the functions in which the UI goroutines of the
// toolkits stall knows wait for their next event: a wait whose call site
// is one of them is the toolkit's idle wait, not a stall.
var toolkitIdle = []string{
	// Fyne v2: the main goroutine, locked to the main thread, runs
	// (*gLDriver).runGL, whose select waits for queued functions and a
	// 60 Hz ticker (fyne.io/fyne/v2 internal/driver/glfw/loop.go).
	"fyne.io/fyne/v2/internal/driver/glfw.(*gLDriver).runGL",
	// Gio: the goroutine that calls Window.Event. On X11 it polls the X
	// connection in (*x11Window).dispatch (gioui.org/app/os_x11.go), on
	// Wayland the display in (*wlDisplay).dispatch (os_wayland.go); on
	// Windows and macOS it receives from the window's event loop in
	// (*eventLoop).Event (os.go).
	"gioui.org/app.(*x11Window).dispatch",
	"gioui.org/app.(*wlDisplay).dispatch",
	"gioui.org/app.(*eventLoop).Event",
	// Bubble Tea v1: the goroutine that calls Program.Run runs
	// (*Program).eventLoop, whose select waits for messages
	// (github.com/charmbracelet/bubbletea tea.go).
	"github.com/charmbracelet/bubbletea.(*Program).eventLoop",
}

// ownPkg is this package's import path: waits inside its own functions
// (stop waiting for the last pass, Watch starting the recorder) are never
// reported.
var ownPkg = reflect.TypeFor[watcher]().PkgPath()

// pkgOf returns the import path of the package of fn, a function name as
// runtime.Frame.Function spells it: "os.(*File).Read" is in "os",
// "example.com/a/b.(*T).M" in "example.com/a/b".
func pkgOf(fn string) string {
	i := strings.LastIndexByte(fn, '/') + 1
	if j := strings.IndexByte(fn[i:], '.'); j >= 0 {
		return fn[:i+j]
	}
	return fn
}

// layer reports whether fn belongs to the layers a wait goes through
// below the code that asked for it: the standard library (whose import
// paths have no dot in their first element; package main has none
// either but is the app's) and golang.org/x/sys.
func layer(fn string) bool {
	p := pkgOf(fn)
	first, _, _ := strings.Cut(p, "/")
	return p != "main" && !strings.Contains(first, ".") ||
		strings.HasPrefix(p, "golang.org/x/sys/")
}

// frames converts a trace stack, innermost first.
func frames(s trace.Stack) []runtime.Frame {
	var fs []runtime.Frame
	for f := range s.Frames() {
		fs = append(fs, runtime.Frame{PC: uintptr(f.PC), Function: f.Func, File: f.File, Line: int(f.Line)})
	}
	return fs
}

// fromSite returns fs from its call site on: the first frame outside the
// layers (see layer), or fs whole if every frame is in them.
func fromSite(fs []runtime.Frame) []runtime.Frame {
	for i, f := range fs {
		if !layer(f.Function) {
			return fs[i:]
		}
	}
	return fs
}

// cgo reports whether fs, a stack taken as the goroutine entered a
// system call, is a call into C: the trace records a cgo call as a
// system call whose innermost frame is cgo's generated _Cfunc_ wrapper
// (cmd/cgo/doc.go).
func cgo(fs []runtime.Frame) bool {
	for _, f := range fs {
		if strings.Contains(f.Function, "._Cfunc_") {
			return true
		}
	}
	return false
}

// own reports whether fs runs through this package.
func own(fs []runtime.Frame) bool {
	for _, f := range fs {
		if pkgOf(f.Function) == ownPkg {
			return true
		}
	}
	return false
}

// syscallPkgs are the packages whose functions name the system calls
// they make.
var syscallPkgs = map[string]bool{
	"syscall": true, "internal/syscall/unix": true, "internal/syscall/windows": true,
	"golang.org/x/sys/unix": true, "golang.org/x/sys/windows": true,
}

// syscallName names the system call of fs, a stack taken as the
// goroutine entered it, from its innermost function in a system call
// package that is not one of the generic entry points (Syscall6,
// SyscallN, rawsyscalln, …): "syscall.read" is "read", "syscall.Fsync"
// "fsync". On Windows the name is the Win32 function's, which Go's
// generated wrappers spell with a lower-case first letter when an
// exported function of the same name wraps them (syscall.readFile is
// "ReadFile", syscall/zsyscall_windows.go).
func syscallName(fs []runtime.Frame, goos string) string {
	for _, f := range fs {
		p := pkgOf(f.Function)
		if !syscallPkgs[p] {
			continue
		}
		name := f.Function[len(p)+1:]
		name = name[strings.LastIndexByte(name, '.')+1:]
		l := strings.ToLower(name)
		if name == "" || strings.HasPrefix(l, "syscall") || strings.HasPrefix(l, "rawsyscall") || strings.HasPrefix(l, "errno") {
			continue
		}
		if goos == "windows" {
			return strings.ToUpper(name[:1]) + name[1:]
		}
		if m, ok := manNames[l]; ok {
			return m
		}
		return l
	}
	return ""
}

// manNames are the system calls whose Go functions' names drop the
// underscores of their manual pages' (unix.ClockGettime is
// clock_gettime(2)).
var manNames = map[string]string{
	"clockgettime": "clock_gettime", "clockgetres": "clock_getres", "clocknanosleep": "clock_nanosleep",
	"epollwait": "epoll_wait", "epollpwait": "epoll_pwait", "copyfilerange": "copy_file_range",
	"syncfilerange": "sync_file_range", "timerfdsettime": "timerfd_settime", "schedyield": "sched_yield",
	"ioprioset": "ioprio_set", "pidfdopen": "pidfd_open", "pidfdsendsignal": "pidfd_send_signal",
}
