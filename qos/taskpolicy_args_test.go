//go:build darwin || linux

package qos

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() {
	helpers["print-argv-env"] = func() int {
		if err := json.NewEncoder(os.Stdout).Encode(argvEnv{os.Args, os.Environ()}); err != nil {
			return 1
		}
		return 0
	}
}

// argvEnv is what the print-argv-env helper reports about itself.
type argvEnv struct {
	Argv, Env []string
}

func TestTaskpolicyArgs(t *testing.T) {
	flags := []string{"-c", "utility", "-d", "utility"}
	tp := func(rest ...string) []string {
		return append([]string{taskpolicy, "-c", "utility", "-d", "utility", "--"}, rest...)
	}
	withPWD := []string{"PATH=/bin", "PWD=/tmp"}
	noPWD := []string{"PATH=/bin", "PWDX=1"}
	tests := []struct {
		name  string
		path  string
		args  []string
		env   []string
		shell string
		want  []string
	}{
		{"argv0 is the path", "/bin/cat", []string{"/bin/cat", "-u"}, withPWD, argv0Shell,
			tp("/bin/cat", "-u")},
		{"no args means the path", "/bin/cat", nil, withPWD, argv0Shell,
			tp("/bin/cat")},
		{"exec.Command name", "/bin/zsh", []string{"zsh", "-f"}, withPWD, argv0Shell,
			tp(argv0Shell, "--posix", "-c", argv0Script, "zsh", "/bin/zsh", "-f")},
		{"login shell", "/bin/zsh", []string{"-zsh"}, withPWD, argv0Shell,
			tp(argv0Shell, "--posix", "-c", argv0Script, "-zsh", "/bin/zsh")},
		{"PWD unset again", "/bin/zsh", []string{"-zsh"}, noPWD, argv0Shell,
			tp(argv0Shell, "--posix", "-c", "unset PWD; "+argv0Script, "-zsh", "/bin/zsh")},
		{"relative path is not looked up in PATH", "prog", []string{"./prog", "x"}, withPWD, argv0Shell,
			tp("./prog", "x")},
		{"relative path keeps its argv0", "prog", []string{"prog"}, withPWD, argv0Shell,
			tp(argv0Shell, "--posix", "-c", argv0Script, "prog", "./prog")},
		{"path that looks like an option", "-x/prog", nil, withPWD, argv0Shell,
			tp(argv0Shell, "--posix", "-c", argv0Script, "-x/prog", "./-x/prog")},
		{"no shell: argv0 is lost", "/bin/zsh", []string{"-zsh", "-l"}, withPWD, "",
			tp("/bin/zsh", "-l")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := taskpolicyArgs(flags, tt.path, tt.args, tt.env, tt.shell)
			assert.Equal(t, tt.want, got, "taskpolicy argv: got %q, want %q", got, tt.want)
		})
	}
}

// TestTaskpolicyArgsShell runs what taskpolicyArgs hands to taskpolicy after
// "--" (taskpolicy itself exists only on macOS) with this test binary as the
// program, and checks that the program sees its own argv[0] and arguments and
// the environment it was given. On Linux this is a newer bash than macOS's
// /bin/bash 3.2; both have exec -a and --posix.
func TestTaskpolicyArgsShell(t *testing.T) {
	if _, err := os.Stat(argv0Shell); err != nil {
		t.Skipf("the argv[0] shell %s is not on this machine: %v", argv0Shell, err)
	}
	self, err := os.Executable()
	require.NoError(t, err)
	tests := []struct {
		name    string
		env     []string
		wantEnv []string // env plus what bash adds
	}{
		{"no PWD, no SHLVL", []string{"A=1"}, []string{"A=1", "SHLVL=0"}},
		{"PWD and SHLVL kept", []string{"A=1", "PWD=" + t.TempDir(), "SHLVL=2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append(slices.Clone(tt.env), helperEnv+"=print-argv-env", "GORACE=atexit_sleep_ms=0")
			args := []string{"-qos argv0", "two words", ""}
			argv := taskpolicyArgs(nil, self, args, env, argv0Shell)
			i := slices.Index(argv, "--")
			require.Positive(t, i, "no -- in %q", argv)
			cmd := exec.Command(argv[i+1], argv[i+2:]...)
			cmd.Env = env
			if pwd, ok := envValue(env, "PWD"); ok {
				cmd.Dir = pwd
			}
			out, err := cmd.Output()
			require.NoError(t, err, "running %q", argv[i+1:])
			var got argvEnv
			require.NoError(t, json.Unmarshal(out, &got), "helper output %q", out)
			assert.Equal(t, args, got.Argv, "argv: got %q, want %q", got.Argv, args)
			want := env
			if tt.wantEnv != nil {
				want = append(slices.Clone(tt.wantEnv), env[len(tt.env):]...)
			}
			slices.Sort(want)
			slices.Sort(got.Env)
			assert.Equal(t, want, got.Env, "environment: got %q, want %q", got.Env, want)
		})
	}
}

func envValue(environ []string, key string) (string, bool) {
	for _, kv := range slices.Backward(environ) {
		if len(kv) > len(key) && kv[:len(key)+1] == key+"=" {
			return kv[len(key)+1:], true
		}
	}
	return "", false
}
