//go:build linux

package fusemount

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Stacks returns every goroutine's stack and, for each thread of this
// process, from proc(5): its state, nice value and scheduling policy
// (/proc/pid/task/tid/stat, fields 3, 19 and 41), its CPU time and
// run-queue wait in nanoseconds (schedstat), its kernel wait channel
// (wchan) and, unless it idles in the Go runtime's futex or epoll waits or
// in go-fuse's read of /dev/fuse, its kernel stack (stack, readable by root
// only).
func Stacks() string {
	var b strings.Builder
	buf := make([]byte, 4<<20)
	b.Write(buf[:runtime.Stack(buf, true)])
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return b.String()
	}
	b.WriteString("\nthreads (tid: state nice policy; cpu ns, wait ns, slices; wchan):\n")
	for _, e := range tasks {
		dir := "/proc/self/task/" + e.Name()
		read := func(name string) string {
			data, _ := os.ReadFile(dir + "/" + name)
			return strings.TrimSpace(string(data))
		}
		state, nice, policy := "?", "?", "?"
		if st := read("stat"); st != "" {
			// The fields after the command's closing parenthesis, which
			// may itself hold spaces: field 3 is the first of them.
			if j := strings.LastIndexByte(st, ')'); j >= 0 {
				f := strings.Fields(st[j+1:])
				if len(f) > 38 {
					state, nice, policy = f[0], f[16], f[38]
				}
			}
		}
		w := read("wchan")
		fmt.Fprintf(&b, "%s: %s %s %s; %s; %s\n", e.Name(), state, nice, policy, read("schedstat"), w)
		if strings.HasPrefix(w, "futex") || strings.Contains(w, "epoll") || w == "fuse_dev_do_read" {
			continue
		}
		if st := read("stack"); st != "" {
			b.WriteString(st + "\n")
		}
	}
	return b.String()
}
