package statefile

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// layoutV3 is the newest format: v1 had {"name"}, v2 renamed it to
// {"title"}, v3 made it {"titles":[...]}. v0 files had no version.
type layoutV3 struct {
	Version int      `json:"version"`
	Titles  []string `json:"titles"`
}

// layoutSteps returns the migrations to v3, recording the steps that ran.
func layoutSteps(ran *[]int) []Migration {
	step := func(v int, fn func(map[string]any)) Migration {
		return Migration{Version: v, Migrate: func(data []byte) ([]byte, error) {
			*ran = append(*ran, v)
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, err
			}
			fn(m)
			return json.Marshal(m)
		}}
	}
	return []Migration{
		step(1, func(m map[string]any) { m["name"] = m["n"]; delete(m, "n") }),
		step(2, func(m map[string]any) { m["title"] = m["name"]; delete(m, "name") }),
		step(3, func(m map[string]any) { m["titles"] = []any{m["title"]}; delete(m, "title") }),
	}
}

// Files of every older version reach v3 through the steps after their own
// version, in order, at the first Load; the result is on disk and the
// backup is gone.
func TestMigrateSeveralVersions(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		wantRan       []int
	}{
		{"v0", `{"n":"a"}`, []int{1, 2, 3}},
		{"v1", `{"version":1,"name":"a"}`, []int{2, 3}},
		{"v2", `{"version":2,"title":"a"}`, []int{3}},
		{"v3", `{"version":3,"titles":["a"]}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "layout.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			var ran []int
			s := NewStore(Options{})
			t.Cleanup(func() { s.Close(context.Background()) })
			f, err := OpenWith(s, path, FileOptions[layoutV3]{Migrations: layoutSteps(&ran)})
			require.NoError(t, err)
			got, err := f.Load(context.Background())
			require.NoError(t, err)
			assert.Equal(t, layoutV3{Version: 3, Titles: []string{"a"}}, got)
			assert.Equal(t, tc.wantRan, ran, "steps that ran")
			var onDisk layoutV3
			require.NoError(t, json.Unmarshal([]byte(readFileT(t, path)), &onDisk))
			assert.Equal(t, got, onDisk, "the migrated file on disk")
			baks, _ := filepath.Glob(path + ".v*.bak")
			assert.Empty(t, baks, "backups left after a migration that completed")
		})
	}
}

// A Save as the first op of the path still migrates (and so checks the
// version) before writing.
func TestMigrateBeforeFirstSave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "layout.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version":9}`), 0o600))
	var ran []int
	s := NewStore(Options{})
	f, err := OpenWith(s, path, FileOptions[layoutV3]{Migrations: layoutSteps(&ran)})
	require.NoError(t, err)
	require.NoError(t, f.Save(layoutV3{Version: 3}))
	require.NoError(t, f.Update(func(v layoutV3) (layoutV3, error) { return v, nil }))
	require.NoError(t, f.Remove())
	err = s.Close(context.Background())
	var ve *VersionError
	require.ErrorAs(t, err, &ve, "a save over a newer file")
	assert.Equal(t, VersionError{Path: path, Version: 9, Newest: 3}, *ve)
	assert.Equal(t, `{"version":9}`, readFileT(t, path), "the newer file must be untouched")
}

// A file written by a newer version is left untouched: Load returns a
// VersionError, and once the file is gone the path works again. The
// version counts in whichever spelling of "version" holds it: the newer
// type may read another one, so a newer integer in any of them is enough,
// as it was when only the exact name counted.
func TestMigrateDowngradeRefused(t *testing.T) {
	for _, newer := range []string{
		`{"version":4,"titles":["a"],"tabs":[1]}`,
		`{"version":4,"Version":"4.1.0","titles":["a"]}`, // a newer type with a string field named "Version"
		`{"version":4,"Version":1,"titles":["a"]}`,
		`{"Version":4,"titles":["a"]}`,
		`{"version":4,"version":1,"titles":["a"]}`,
	} {
		t.Run(newer, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "layout.json")
			require.NoError(t, os.WriteFile(path, []byte(newer), 0o600))
			var ran []int
			s := NewStore(Options{})
			t.Cleanup(func() { s.Close(context.Background()) })
			f, err := OpenWith(s, path, FileOptions[layoutV3]{Migrations: layoutSteps(&ran)})
			require.NoError(t, err)
			_, err = f.Load(context.Background())
			require.ErrorIs(t, err, ErrNewerVersion)
			var ve *VersionError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, 4, ve.Version)
			require.NoError(t, f.Save(layoutV3{Version: 3}))
			assert.ErrorIs(t, f.Flush(context.Background()), ErrNewerVersion, "Flush of a save over a newer file")
			assert.Equal(t, newer, readFileT(t, path), "the newer file must be untouched")
			assert.Empty(t, ran)

			require.NoError(t, os.Remove(path)) // the user chose to drop it
			require.NoError(t, f.Save(layoutV3{Version: 3, Titles: []string{"b"}}))
			assert.NoError(t, f.Flush(context.Background()))
		})
	}
}

// A failing step writes nothing and keeps failing the path's ops, so no
// save replaces the file it could not migrate.
func TestMigrateStepFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "layout.json")
	old := `{"version":1,"name":"a"}`
	require.NoError(t, os.WriteFile(path, []byte(old), 0o600))
	bad := errors.New("cannot convert")
	var ran []int
	steps := layoutSteps(&ran)
	steps[2].Migrate = func([]byte) ([]byte, error) { return nil, bad }
	s := NewStore(Options{})
	t.Cleanup(func() { s.Close(context.Background()) })
	f, err := OpenWith(s, path, FileOptions[layoutV3]{Migrations: steps})
	require.NoError(t, err)
	_, err = f.Load(context.Background())
	assert.ErrorIs(t, err, bad)
	require.NoError(t, f.Save(layoutV3{Version: 3}))
	assert.ErrorIs(t, f.Flush(context.Background()), bad)
	assert.Equal(t, old, readFileT(t, path))
}

// The old file is copied to "<name>.v<N>.bak" before the migrated one
// replaces it, and the copy stays while the replacement fails.
func TestMigrateKeepsBackupUntilDurable(t *testing.T) {
	s := NewStore(Options{})
	d := newFakeDisk(s, false)
	d.files[osPath("/state/l.json")] = []byte(`{"version":2,"title":"a"}`)
	var commits []string
	s.hooks.commit = func(path string, data []byte, tr *SaveTrace) error {
		commits = append(commits, filepath.Base(path))
		if path == osPath("/state/l.json") && len(commits) == 2 {
			return errors.New("disk full")
		}
		return d.commit(path, data, tr)
	}
	var ran []int
	f, err := OpenWith(s, osPath("/state/l.json"), FileOptions[layoutV3]{Migrations: layoutSteps(&ran)})
	require.NoError(t, err)
	_, err = f.Load(context.Background())
	require.ErrorContains(t, err, "disk full")
	bak, ok := d.content(osPath("/state/l.json.v2.bak"))
	require.True(t, ok, "the backup is gone while the migrated file is not written")
	assert.Equal(t, `{"version":2,"title":"a"}`, bak)
	got, err := f.Load(context.Background()) // retried: the disk is fine now
	require.NoError(t, err)
	assert.Equal(t, layoutV3{Version: 3, Titles: []string{"a"}}, got)
	_, ok = d.content(osPath("/state/l.json.v2.bak"))
	assert.False(t, ok, "the backup must go once the migrated file is durable")
	assert.Equal(t, []string{"l.json.v2.bak", "l.json", "l.json.v2.bak", "l.json", "l.json.v2.bak"}, commits)
	require.NoError(t, s.Close(context.Background()))
}

func TestMigrationsChecked(t *testing.T) {
	s := NewStore(Options{})
	t.Cleanup(func() { s.Close(context.Background()) })
	noop := func(b []byte) ([]byte, error) { return b, nil }
	for name, ms := range map[string][]Migration{
		"zero version": {{Version: 0, Migrate: noop}},
		"not sorted":   {{Version: 2, Migrate: noop}, {Version: 1, Migrate: noop}},
		"nil func":     {{Version: 1}},
	} {
		_, err := OpenWith(s, filepath.Join(t.TempDir(), "x.json"), FileOptions[layoutV3]{Migrations: ms})
		assert.Error(t, err, name)
	}
	_, err := OpenWith(s, filepath.Join(t.TempDir(), "y.json"), FileOptions[prefs]{Migrations: []Migration{{Version: 1, Migrate: noop}}})
	assert.ErrorContains(t, err, `"version"`, "a type without a version member")
}

func TestWithVersion(t *testing.T) {
	out, err := withVersion([]byte(`{"a":1}`), 4)
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":1,"version":4}`, string(out))
	_, err = withVersion([]byte(`[1]`), 4)
	assert.Error(t, err)
	// A step that kept the old member under another case: it goes, or a
	// decoder that keeps the last match could read the old version.
	out, err = withVersion([]byte("{\"Version\":3,\"ver\u017fion\":3,\"a\":1}"), 4)
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":1,"version":4}`, string(out))
	_, ok := versionOf([]byte(`["old"]`))
	assert.False(t, ok, "a non-object has no version")
	_, ok = versionOf([]byte(`{"version":"x"}`))
	assert.False(t, ok)
	assert.True(t, strings.HasSuffix((&VersionError{Path: "p", Version: 2, Newest: 1}).Error(), "left untouched"))
}

// A save whose value does not carry the newest version fails and writes
// nothing: the next start would migrate it again.
func TestMigrateSaveWrongVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "layout.json")
	var ran []int
	s := NewStore(Options{})
	t.Cleanup(func() { s.Close(context.Background()) })
	f, err := OpenWith(s, path, FileOptions[layoutV3]{Migrations: layoutSteps(&ran)})
	require.NoError(t, err)
	require.NoError(t, f.Save(layoutV3{Titles: []string{"x"}}))
	assert.ErrorContains(t, f.Flush(context.Background()), `"version" must be 3`)
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, f.Save(layoutV3{Version: 3}))
	assert.NoError(t, f.Flush(context.Background()))
}
