//go:build unix

package qos_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"

	"github.com/offmain/offmain/qos"
)

// An app starts each agent host through Start, with the mode it resolved
// once (see Resolve) forwarded in the host's environment.
func ExampleStart() {
	mode := qos.ModeUtility
	host := exec.Command("sh", "-c", `echo "agent host up, mode $OFFMAIN_QOS"`)
	host.Env = []string{"PATH=" + os.Getenv("PATH"), qos.Env(mode)}
	out, err := host.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := qos.Start(host, qos.Agent, mode); err != nil {
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
	// Output: agent host up, mode utility
}
