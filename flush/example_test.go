package flush_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
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
	hook := flush.New(50 * time.Millisecond)
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
	fmt.Println("drained:", r.Drained)
	for _, it := range r.Items {
		fmt.Printf("%s: drained=%v deadline=%v\n", it.Name, it.Drained, errors.Is(it.Err, context.DeadlineExceeded))
	}
	fmt.Println("on time:", r.Took < time.Second)
	// Output:
	// drained: false
	// settings: drained=true deadline=false
	// drafts: drained=false deadline=true
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

	hook := flush.New(2 * time.Second)
	hook.Add("drafts", d)       // queues the unsaved draft now, then waits for it
	hook.Add("anchors", places) // the same for the scroll places
	hook.Add("statefile", st)   // everything else queued on the Store

	r := hook.Run() // from the toolkit's quit path
	fmt.Println("drained:", r.Drained)
	for _, it := range r.Items {
		fmt.Println(it.Name, it.Drained)
	}
	// Output:
	// drained: true
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

	hook := flush.New(2 * time.Second)
	st := statefile.NewStore(statefile.Options{})
	hook.Add("state", st) // right after NewStore: no Save can come before it
	d, err := drafts.Open(st, filepath.Join(dir, "drafts.json"), drafts.Options{})
	if err != nil {
		log.Fatal(err)
	}
	hook.Add("drafts", d)
	var agents qos.Group
	hook.Add("agents", flush.Func(agents.Stop)) // SIGTERM, then SIGKILL, to each agent's process group
	stop := hook.Notify()
	defer stop()

	agent := agentCommand() // sleep 30, in a process group of its own (Setsid) so Stop reaches what it starts
	if err := agents.Start(agent, qos.Agent, qos.ModeUtility); err != nil {
		log.Fatal(err)
	}
	go func() { _ = agent.Wait() }() // the caller reaps its agents, as with any command
	fmt.Println("serving")

	// ... serve until a signal arrives; here the quit runs at once:
	r := hook.Run()
	fmt.Println(r.Drained, len(r.Items))
	// Output:
	// serving
	// true 3
}

func ExampleReport_String() {
	r := flush.Report{Took: 2 * time.Second, Items: []flush.Item{
		{Name: "anchors", Drained: true},
		{Name: "drafts", Err: fmt.Errorf("statefile: not drained: 1 pending (/home/u/.local/state/app/drafts.json): %w", context.DeadlineExceeded)},
	}}
	fmt.Println(r)
	// Output: flush: drained 1/2 in 2s; not drained: drafts: statefile: not drained: 1 pending (/home/u/.local/state/app/drafts.json): context deadline exceeded
}
