//go:build unix

package qos_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"time"

	"github.com/offmain/offmain/qos"
)

// An app starts each agent host through a Group, with the mode it resolved
// forwarded in the host's environment, and stops them all at quit (in a
// quit hook: flush.Func(agents.Stop)).
func ExampleGroup() {
	var agents qos.Group
	mode := qos.ModeUtility
	host := exec.Command("sh", "-c", `echo "agent host up, mode $OFFMAIN_QOS"`)
	host.Env = []string{"PATH=" + os.Getenv("PATH"), qos.EnvVar + "=" + string(mode)}
	out, err := host.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := agents.Start(host, qos.Agent, mode); err != nil {
		log.Fatal(err)
	}
	b, err := io.ReadAll(out)
	if err != nil {
		log.Fatal(err)
	}
	if err := host.Wait(); err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(b))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Println(agents.Stop(ctx))
	// Output:
	// agent host up, mode utility
	// <nil>
}

// A short command the app waits for itself, and whose tree need not be
// held, starts through Start: here a stand-in for git status, at the
// Background tier.
func ExampleStart() {
	status := exec.Command("sh", "-c", "echo clean")
	out, err := status.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := qos.Start(status, qos.Background, qos.ModeUtility); err != nil {
		log.Fatal(err)
	}
	b, err := io.ReadAll(out)
	if err != nil {
		log.Fatal(err)
	}
	if err := status.Wait(); err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(b))
	// Output: clean
}
