package flush_test

import (
	"bufio"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A snippet copied literally must not lose data: the README's and this
// package's, which people copy, add every store their code opens to the
// hook. A store left out (the drafts store behind a statefile.Store)
// loses its last edits at quit while the report says every item drained.

var (
	opened = regexp.MustCompile(`(\w+)(?:, err)? :?= (?:statefile\.NewStore|drafts\.Open|anchors\.Open)\(`)
	added  = regexp.MustCompile(`hook\.Add\("[^"]+", (\w+)\)`)
)

// storesNotAdded returns the stores opened in text that no hook.Add adds.
func storesNotAdded(text string) []string {
	add := map[string]bool{}
	for _, m := range added.FindAllStringSubmatch(text, -1) {
		add[m[1]] = true
	}
	var missing []string
	for _, m := range opened.FindAllStringSubmatch(text, -1) {
		if !add[m[1]] {
			missing = append(missing, m[1])
		}
	}
	return missing
}

func TestReadmeAddsEveryStore(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	text := string(b)
	require.Contains(t, text, "flush.New(", "the README's flush snippet")
	assert.Empty(t, storesNotAdded(text), "stores the README opens but its flush snippet does not add")
}

func TestPackageDocAddsEveryStore(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.PackageClauseOnly|parser.ParseComments)
	require.NoError(t, err)
	text := f.Doc.Text()
	require.Contains(t, text, "hook.Add(", "the package doc's snippet")
	assert.Empty(t, storesNotAdded(text), "stores the package doc opens but does not add")
}

// TestReadmeInstall runs the README's install commands, as written, in a
// scratch module beside a copy of this repository at ../offmain, for a
// program that uses each package, and builds it. The module cache supplies the
// dependencies (GOPROXY=off): the README's recipe must need nothing that
// is not published.
func TestReadmeInstall(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		// The recipe is go commands; a machine without Go (the Windows
		// test binaries run under Wine have none) cannot follow it.
		t.Skipf("the README's install recipe runs the go command, and this machine has none: %v", err)
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	cmds := installCommands(t, filepath.Join(root, "README.md"))
	require.NotEmpty(t, cmds, "the README's install commands")

	top := t.TempDir()
	require.NoError(t, os.Symlink(root, filepath.Join(top, "offmain")))
	app := filepath.Join(top, "app")
	require.NoError(t, os.Mkdir(app, 0o755))
	env := append(os.Environ(), "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = app, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s:\n%s", strings.Join(args, " "), out)
	}
	run(gobin, "mod", "init", "example.com/app")
	// The code first: the recipe's go mod tidy adds what it imports.
	require.NoError(t, os.WriteFile(filepath.Join(app, "main.go"), []byte(installMain), 0o644))
	for _, c := range cmds {
		t.Logf("$ %s", strings.Join(c, " "))
		require.Equal(t, "go", c[0], "an install command that is not go's")
		run(append([]string{gobin}, c[1:]...)...)
	}
	run(gobin, "build", "-o", os.DevNull, ".")
	mod, err := os.ReadFile(filepath.Join(app, "go.mod"))
	require.NoError(t, err)
	t.Logf("go.mod:\n%s", mod)
	for _, dep := range []string{"github.com/fsnotify/fsnotify", "golang.org/x/sys"} {
		assert.Contains(t, string(mod), dep, "the README says the module then requires it")
	}
	for _, dep := range []string{"github.com/stretchr/testify", "go.uber.org/goleak", "github.com/hanwen/go-fuse"} {
		assert.NotContains(t, string(mod), dep, "only this module's own tests need it")
	}
	// The harnesses that need go-fuse (power cuts, fault filesystems) are
	// a module of their own: no module an app's graph holds requires it.
	cmd := exec.Command(gobin, "mod", "graph")
	cmd.Dir, cmd.Env = app, env
	graph, err := cmd.Output()
	require.NoError(t, err, "go mod graph")
	assert.NotContains(t, string(graph), "go-fuse", "the app's module graph:\n%s", graph)
}

// installMain is a program that uses each package.
const installMain = `package main

import (
	"fmt"
	"time"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/qos"
	"github.com/offmain/offmain/statefile"
)

func main() {
	st := statefile.NewStore(statefile.Options{})
	_, _ = drafts.Open(st, "d.json", drafts.Options{})
	_, _ = anchors.Open(st, "a.json", anchors.Options{})
	var g qos.Group
	h := flush.New(flush.Options{Timeout: time.Second})
	h.Add("state", st)
	h.AddStop("agents", flush.Func(g.Stop))
	fmt.Println(h.Exit().Saved)
}
`

// installCommands returns the commands of the README's Install section:
// its indented lines, each split into words, a trailing # comment dropped.
func installCommands(t *testing.T, readme string) [][]string {
	t.Helper()
	f, err := os.Open(readme)
	require.NoError(t, err)
	defer f.Close()
	var cmds [][]string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Install"
		case in && strings.HasPrefix(line, "    "):
			line, _, _ = strings.Cut(line, "#")
			cmds = append(cmds, strings.Fields(line))
		}
	}
	require.NoError(t, sc.Err())
	return cmds
}
