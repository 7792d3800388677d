//go:build linux

package qos

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/offmain/offmain/qos/internal/cgocrash"
)

func init() {
	helpers["tree-agent"] = treeAgentHelper
	helpers["tree-app"] = treeAppHelper
}

// treePids are the processes of a tree agent, as it prints them.
type treePids struct {
	Agent      int // the agent: exits on SIGTERM
	Background int // a background job, in the agent's process group
	Stubborn   int // in the agent's process group, ignoring SIGTERM
	OwnGroup   int // a child in a process group of its own
	Daemon     int // a daemon: a new session, its parent exited (a double fork)
}

func (p treePids) all() []int { return []int{p.Agent, p.Background, p.Stubborn, p.OwnGroup, p.Daemon} }

func (p treePids) String() string {
	return fmt.Sprintf("%d %d %d %d %d", p.Agent, p.Background, p.Stubborn, p.OwnGroup, p.Daemon)
}

func parseTreePids(line string) (treePids, error) {
	var p treePids
	_, err := fmt.Sscan(line, &p.Agent, &p.Background, &p.Stubborn, &p.OwnGroup, &p.Daemon)
	return p, err
}

// treeAgentHelper is an agent that starts what agents start: a background
// job, a child that ignores SIGTERM, a child in a process group of its own
// and a daemon (a child in a new session whose parent exited at once),
// prints their pids and its own on one line, and waits for stdin to close.
// Its own SIGTERM ends it (the default action).
func treeAgentHelper() int {
	start := func(setpgid bool, name string, args ...string) (*exec.Cmd, error) {
		c := exec.Command(name, args...)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: setpgid}
		return c, c.Start()
	}
	bg, err1 := start(false, "/bin/sleep", "1000")
	// It says when its SIGTERM is ignored (which the exec keeps).
	stubborn := exec.Command("/bin/sh", "-c", "trap '' TERM; echo ready; exec sleep 1000")
	ready, err2 := stubborn.StdoutPipe()
	if err2 == nil {
		err2 = stubborn.Start()
	}
	if err2 == nil {
		_, err2 = bufio.NewReader(ready).ReadString('\n')
	}
	own, err3 := start(true, "/bin/sleep", "1000")
	d := exec.Command("/bin/sh", "-c", "sleep 1000 </dev/null >/dev/null 2>&1 & echo $!")
	d.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err4 := d.Output() // its shell has exited: the sleep is orphaned
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			fmt.Println(err)
			return 1
		}
	}
	daemon, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println(treePids{os.Getpid(), bg.Process.Pid, stubborn.Process.Pid, own.Process.Pid, daemon})
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// treeAppHelper is an app that starts a tree agent through a Group in the
// mode QOS_TEST_MODE names, prints the keeper's pid and the tree's, and
// then does what each line on its stdin says: "panic" (in a goroutine of
// its own), "cgo" (a crash in C), "stop" (Group.Stop, then its error).
func treeAppHelper() int {
	g := &Group{KillAfter: 300 * time.Millisecond}
	agent := helperCmd("TestTreeHelper", "tree-agent")
	out, _ := agent.StdoutPipe()
	in, _ := agent.StdinPipe()
	defer in.Close()
	if err := g.Start(agent, Agent, Mode(os.Getenv("QOS_TEST_MODE"))); err != nil {
		fmt.Println(err)
		return 1
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		fmt.Println("the agent said", line, err)
		return 1
	}
	fmt.Println(agent.Process.Pid, strings.TrimSpace(line))
	for s := bufio.NewScanner(os.Stdin); s.Scan(); {
		switch s.Text() {
		case "panic":
			go panic("qos test: the app panics")
			select {}
		case "cgo":
			cgocrash.Crash()
		case "stop":
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			fmt.Println("stop:", g.Stop(ctx))
			cancel()
		}
	}
	return 0
}
