package flush_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/qos"
	"github.com/offmain/offmain/statefile"
)

// A store whose disk never answers: Run still returns by the deadline and
// names it.
func Example() {
	hung := make(chan struct{}) // never closed: a write stuck in the kernel
	hook := flush.New(flush.Options{Timeout: 50 * time.Millisecond})
	hook.Add("settings", flush.Func(func(ctx context.Context) error { return nil }))
	hook.Add("drafts", flush.Func(func(ctx context.Context) error {
		select { // a well-behaved store gives up with its context
		case <-hung:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("drafts.json still pending: %w", ctx.Err())
		}
	}))

	r := hook.Run()
	fmt.Println("saved:", r.Saved)
	for _, it := range r.Items {
		fmt.Printf("%s: saved=%v deadline=%v\n", it.Name, it.Err == nil, errors.Is(it.Err, context.DeadlineExceeded))
	}
	fmt.Println("on time:", r.Took < time.Second)
	// Output:
	// saved: false
	// settings: saved=true deadline=false
	// drafts: saved=false deadline=true
	// on time: true
}

// The stores of an app, flushed together at quit under one deadline.
func ExampleHook_Run() {
	dir, err := os.MkdirTemp("", "flush-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	st := statefile.NewStore(statefile.Options{})
	d, err := drafts.Open(st, filepath.Join(dir, "drafts.json"), drafts.Options{})
	if err != nil {
		log.Fatal(err)
	}
	places, err := anchors.Open(st, filepath.Join(dir, "anchors.json"), anchors.Options{})
	if err != nil {
		log.Fatal(err)
	}
	d.Set("chat-1", "half a thought")
	places.Set("chat-1", anchors.Anchor{Item: "msg-9", Offset: 30})

	hook := flush.New(flush.Options{})
	hook.Add("drafts", d)       // queues the unsaved draft now, then waits for it
	hook.Add("anchors", places) // the same for the scroll places
	hook.Add("statefile", st)   // everything else queued on the Store

	r := hook.Run() // before a "quit anyway?" prompt: saves, stops nothing
	fmt.Println("saved:", r.Saved)
	for _, it := range r.Items {
		fmt.Println(it.Name, it.Err == nil)
	}
	// Output:
	// saved: true
	// drafts true
	// anchors true
	// statefile true
}

// The start-up a first program copies: the Hook first, each store added
// right after it is made, the agents' Group added before the first agent
// starts, then Notify. SIGINT, SIGTERM or SIGHUP then stop the agents and
// flush every store under one deadline, print the report and exit with
// 128+signal; a crash or SIGKILL still ends the agents on Linux (see
// qos.Group).
func ExampleHook_Notify() {
	dir, err := os.MkdirTemp("", "flush-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	hook := flush.New(flush.Options{})
	st := statefile.NewStore(statefile.Options{})
	hook.Add("state", st) // right after NewStore: no Save can come before it
	d, err := drafts.Open(st, filepath.Join(dir, "drafts.json"), drafts.Options{})
	if err != nil {
		log.Fatal(err)
	}
	hook.Add("drafts", d)
	var agents qos.Group
	hook.AddStop("agents", flush.Func(agents.Stop)) // at exit only: SIGTERM, then SIGKILL, to each agent's tree
	stop := hook.Notify()
	defer stop()

	agent := agentCommand() // sleep 30, in a process group of its own (Setsid) so Stop reaches what it starts
	if err := agents.Start(agent, qos.Agent, qos.ModeUtility); err != nil {
		log.Fatal(err)
	}
	go func() { _ = agent.Wait() }() // the caller reaps its agents, as with any command
	fmt.Println("serving")

	// ... serve until a signal arrives, or the app decides to exit:
	r := hook.Exit()
	fmt.Println(r.Saved, r.Stopped, len(r.Items))
	// Output:
	// serving
	// true true 3
}

func ExampleReport_String() {
	drafts := "/home/u/.local/state/app/drafts.json"
	r := flush.Report{Took: 2 * time.Second, Items: []flush.Item{
		{Name: "anchors"},
		{Name: "drafts", Err: &statefile.NotDrainedError{Failed: map[string]error{
			drafts: &fs.PathError{Op: "statefile: save", Path: drafts, Err: syscall.ENOSPC},
		}}},
	}}
	fmt.Println(r)
	// Output:
	// flush: saved 1/2 in 2s
	//   /home/u/.local/state/app/drafts.json: save: no space left on device
}

// Wails v2 calls the app's OnShutdown after the frontend is gone, just
// before the process ends (options.App's OnShutdown, in
// github.com/wailsapp/wails/v2/pkg/options). The hook has a deadline of its
// own, so the app's context, which Wails may have canceled by then, is not
// passed on. To flush while the window is still on screen, and ask the
// person, call Run from OnBeforeClose instead; the Exit at shutdown then
// finds little left.
func ExampleHook_Exit_wails() {
	hook := flush.New(flush.Options{})
	onShutdown := func(ctx context.Context) { // options.App{OnShutdown: onShutdown}
		if r := hook.Exit(); !r.Saved {
			log.Print(r)
		}
	}
	onShutdown(context.Background())
	fmt.Println("exited")
	// Output: exited
}

// A daemon that decides its exit itself, instead of Notify: serve until
// SIGINT or SIGTERM, then exit through the hook, with status 1 when
// something was not saved.
func ExampleHook_Exit_daemon() {
	hook := flush.New(flush.Options{})
	st := statefile.NewStore(statefile.Options{})
	hook.Add("state", st)

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	serve := func(ctx context.Context) {} // until ctx ends
	serve(ctx)
	if r := hook.Exit(); !r.Saved {
		log.Print(r)
		os.Exit(1)
	}
	fmt.Println("clean")
	// Output: clean
}
