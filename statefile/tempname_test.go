package statefile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nameOf returns a file name of exactly n bytes: chars repeated, then
// ASCII letters to fill what a whole character no longer fits.
func nameOf(n int, chars ...string) string {
	var b strings.Builder
	for i := 0; ; i++ {
		c := chars[i%len(chars)]
		if b.Len()+len(c) > n {
			break
		}
		b.WriteString(c)
	}
	for b.Len() < n {
		b.WriteByte('z')
	}
	return b.String()
}

// longNames returns a name of every length from 200 to 255 bytes in ASCII,
// and one of every such length mixing 2-, 3- and 4-byte UTF-8 characters.
// Every one is a legal name on Linux, macOS and Windows (255 bytes of
// UTF-8 are at most 255 UTF-16 units).
func longNames() []string {
	var names []string
	for n := 200; n <= 255; n++ {
		names = append(names, nameOf(n, "s"), nameOf(n, "é", "日", "😀", "-"))
	}
	return names
}

// crashEnv names the directory in which a child test process crashes in
// the middle of a save of each of its paths (crashMidSave).
const crashEnv = "OFFMAIN_TEST_CRASH_DIR"

// crashMidSave runs in the child: it starts a save of each name in dir and
// ends the process once every save has created its temp file and none has
// renamed it, leaving what a crash (SIGKILL, power loss after the writes
// reached the disk) leaves.
func crashMidSave(dir string, names []string) {
	s := NewStore(Options{MaxParallel: len(names)})
	var created sync.WaitGroup
	created.Add(len(names))
	s.hooks.tempCreated = func(string) {
		created.Done()
		select {} // this save never goes on: the process ends first
	}
	for _, name := range names {
		f, err := Open[string](s, filepath.Join(dir, name))
		if err == nil {
			err = f.Save("crashed")
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	created.Wait()
	os.Exit(3)
}

// crash re-runs the test binary's test to crash in dir (crashMidSave) and
// returns the temp files it left.
func crash(t *testing.T, test, dir string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit) && exit.ExitCode() == 3, "child: got %v, want exit status 3; output:\n%s", err, out)
	var temps []string
	for _, name := range dirNames(t, dir) {
		if strings.HasPrefix(name, ".") {
			temps = append(temps, name)
		}
	}
	return temps
}

// saveAll saves each name's own value in a new Store and checks that the
// saves land and load back.
func saveAll(t *testing.T, dir string, names []string) {
	t.Helper()
	s := NewStore(Options{MaxParallel: 8})
	files := make([]*File[string], len(names))
	for i, name := range names {
		var err error
		files[i], err = Open[string](s, filepath.Join(dir, name))
		require.NoError(t, err)
		require.NoError(t, files[i].Save(fmt.Sprintf("value of name %d", i)))
	}
	require.NoError(t, s.Flush(context.Background()), "saves of names of 200 to 255 bytes")
	for i, f := range files {
		got, err := f.Load(context.Background())
		assert.NoError(t, err, "load of a %d-byte name", len(names[i]))
		assert.Equal(t, fmt.Sprintf("value of name %d", i), got, "load of a %d-byte name", len(names[i]))
	}
	require.NoError(t, s.Close(context.Background()))
}

// checkAll opens each name in a new Store, which sweeps its temp files, and
// checks that the files hold what saveAll saved and nothing else is left.
func checkAll(t *testing.T, dir string, names []string) {
	t.Helper()
	s := NewStore(Options{})
	for i, name := range names {
		f, err := Open[string](s, filepath.Join(dir, name))
		require.NoError(t, err)
		got, err := f.Load(context.Background()) // behind the sweep
		assert.NoError(t, err, "load after the crash, %d-byte name", len(name))
		assert.Equal(t, fmt.Sprintf("value of name %d", i), got, "load after the crash, %d-byte name", len(name))
	}
	require.NoError(t, s.Close(context.Background()))
	want := slices.Clone(names)
	slices.Sort(want)
	assert.Equal(t, want, dirNames(t, dir), "after the sweeps: the state files, no temp file")
}

// Every legal name saves, loads, and has its crash leftovers swept: names
// of every length from 200 to 255 bytes, ASCII and multi-byte. A temp name
// of "." + name + 19 digits used to exceed the 255-byte limit from 236
// bytes on, so such names failed to save (mostly, then always).
func TestEveryNameLengthSaves(t *testing.T) {
	names := longNames()
	if dir := os.Getenv(crashEnv); dir != "" {
		crashMidSave(dir, names)
	}
	dir := t.TempDir()
	for _, name := range names {
		// The name itself is legal here: it can be created.
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(`"old"`+"\n"), 0o600), "%d-byte name", len(name))
	}
	saveAll(t, dir, names)
	temps := crash(t, "TestEveryNameLengthSaves", dir)
	assert.Len(t, temps, len(names), "temp files the crash left: one per name")
	for _, name := range temps {
		assert.LessOrEqual(t, len(name), maxNameBytes, "temp name %q", name)
	}
	checkAll(t, dir, names)
}

// Two long names with the same first 200 bytes: each one's sweep takes its
// own temp files and never the other's.
func TestLongNamesSharingAPrefix(t *testing.T) {
	prefix := nameOf(200, "p")
	a, b := prefix+nameOf(50, "a"), prefix+nameOf(50, "b")
	names := []string{a, b}
	if dir := os.Getenv(crashEnv); dir != "" {
		crashMidSave(dir, names)
	}
	require.NotEqual(t, tempStem(a), tempStem(b), "stems of two names sharing 200 bytes")
	dir := t.TempDir()
	saveAll(t, dir, names)
	temps := crash(t, "TestLongNamesSharingAPrefix", dir)
	require.Len(t, temps, 2, "temp files the crash left")
	tempOf := func(name string) string {
		for _, tmp := range temps {
			if strings.HasPrefix(tmp, "."+tempStem(name)) {
				return tmp
			}
		}
		t.Fatalf("no temp file of %q among %q", name, temps)
		return ""
	}
	ta, tb := tempOf(a), tempOf(b)

	sweep(t, filepath.Join(dir, a))
	assert.NoFileExists(t, filepath.Join(dir, ta), "a's temp file after a's sweep")
	assert.FileExists(t, filepath.Join(dir, tb), "b's temp file after a's sweep")
	sweep(t, filepath.Join(dir, b))
	assert.NoFileExists(t, filepath.Join(dir, tb), "b's temp file after b's sweep")
	checkAll(t, dir, names)
}

// A name too long for the file system itself fails as before: the error
// (ENAMETOOLONG on Unix) reaches OnError and Flush, and nothing is left
// under another name.
func TestNameTooLongReported(t *testing.T) {
	dir := t.TempDir()
	name := nameOf(maxNameBytes+1, "s")
	var reported error
	s := NewStore(Options{OnError: func(err error) { reported = err }})
	f, err := Open[string](s, filepath.Join(dir, name))
	require.NoError(t, err)
	require.NoError(t, f.Save("x"))
	err = s.Flush(context.Background())
	var nd *NotDrainedError
	require.ErrorAs(t, err, &nd, "Flush of a %d-byte name", len(name))
	assert.True(t, isNameTooLong(nd.Failed[f.Path()]), "Flush: got %v, want a name-too-long error", nd.Failed[f.Path()])
	assert.True(t, isNameTooLong(reported), "OnError: got %v, want a name-too-long error", reported)
	// Close tries the failed save once more (see Store.Close), and says so.
	err = s.Close(context.Background())
	require.ErrorAs(t, err, &nd, "Close of a %d-byte name", len(name))
	assert.True(t, isNameTooLong(nd.Failed[f.Path()]), "Close: got %v, want a name-too-long error", nd.Failed[f.Path()])
	assert.Empty(t, dirNames(t, dir), "nothing written under another name")
}

// The temp name's stem: the name itself up to maxStemBytes, else a prefix
// cut where a character starts, "~" and a hash. The temp name fits in 255
// bytes and in 255 UTF-16 units (Windows), also for names legal on NTFS
// only (255 units in up to 765 bytes).
func TestTempStem(t *testing.T) {
	names := longNames()
	names = append(names, strings.Repeat("日", 255), strings.Repeat("😀", 127)+"s", strings.Repeat("é", 240), nameOf(236, "s")+"\xff\xfe")
	stems := map[string]string{}
	for _, name := range names {
		stem := tempStem(name)
		temp := "." + stem + "9223372036854775807"
		assert.LessOrEqual(t, len(temp), maxNameBytes, "longest temp name of a %d-byte name: bytes", len(name))
		assert.LessOrEqual(t, utf16Units(temp), maxNameBytes, "longest temp name of a %d-byte name: UTF-16 units", len(name))
		if len(name) <= maxStemBytes {
			assert.Equal(t, name, stem, "a %d-byte name is its own stem", len(name))
		} else {
			assert.True(t, isLongStem(stem), "long stem %q", stem)
			prefix := stem[:len(stem)-stemHashDigits-1]
			assert.True(t, strings.HasPrefix(name, prefix), "stem %q: not a prefix of the name", stem)
			assert.True(t, !utf8.ValidString(name) || utf8.ValidString(prefix), "stem of a valid name cut inside a character: %q", stem)
			assert.GreaterOrEqual(t, len(prefix), longStemPrefix-3, "prefix kept of a %d-byte name", len(name))
		}
		if other, dup := stems[stem]; dup {
			t.Errorf("names %q and %q share the stem %q", other, name, stem)
		}
		stems[stem] = name
	}
	assert.Equal(t, 3, utf16Units("a😀"), "UTF-16 units of a, U+1F600")
}

// utf16Units is the length of s in UTF-16 code units, as Windows counts a
// name (an invalid byte becomes U+FFFD: one unit).
func utf16Units(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// isTempName tells base's temp files from its siblings': the long shape
// and the short one, with the siblings a name could belong to.
func TestIsTempNameLong(t *testing.T) {
	long := nameOf(250, "L")
	stem := tempStem(long)
	short := "state.json"
	tests := []struct {
		name, temp, base string
		siblings         []string // stems of the other names in the directory
		want             bool
	}{
		{"long name's temp", "." + stem + "123", long, nil, true},
		{"long name's temp, digits 0", "." + stem + "0", long, nil, true},
		{"long name's old-shape temp is not its shape", "." + long + "1", long, nil, false},
		{"another long name's temp", "." + tempStem(nameOf(250, "M")) + "123", long, nil, false},
		{"a sibling named after the stem owns the shape", "." + stem + "123", long, []string{stem}, false},
		{"a sibling named stem+1 owns .stem123", "." + stem + "123", long, []string{stem + "1"}, false},
		{"short name's temp", "." + short + "42", short, nil, true},
		{"short sibling state.json4", "." + short + "42", short, []string{short + "4"}, false},
		{"sibling whose temp would be 0", "." + short + "40", short, []string{short + "4"}, false},
		{"sibling with a leading-zero suffix cannot own it", "." + short + "402", short, []string{short + "4"}, true},
		{"leading zero", "." + short + "042", short, nil, false},
		{"too many digits", "." + short + "92233720368547758070", short, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := func(s string) bool { return slices.Contains(tt.siblings, s) }
			got := isTempName(tt.temp, tt.base, other)
			assert.Equal(t, tt.want, got, "isTempName(%q, %q): got %v, want %v", tt.temp, tt.base, got, tt.want)
		})
	}
}
