package statefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
)

// Migration is one step of a file's format history, for
// [FileOptions.Migrations]. The version of a file is the integer member
// "version" of its top-level JSON object, as encoding/json decodes it into
// an int field tagged `json:"version"` (the name matched without regard to
// case, the last such member counting); a file without one (or whose top
// level is not an object) is at version 0. A file any of whose members of
// that name, in any case, holds a version above the newest step's is a
// newer release's, and is never replaced (see [VersionError]).
type Migration struct {
	// Version is the version Migrate produces; the steps of a path are
	// given in increasing order of Version, starting at 1 or above.
	Version int

	// Migrate turns the JSON of the version before into this Version's.
	// It runs on the path's writer. Its result must be a JSON object; its
	// "version" member is set to Version if it is not already.
	Migrate func(data []byte) ([]byte, error)
}

// ErrNewerVersion is matched by the [*VersionError] of a file written by a
// newer version of the app.
var ErrNewerVersion = errors.New("statefile: file has a newer version")

// VersionError reports a file whose version is newer than the newest
// [Migration] of its path: a newer release of the app wrote it, at the
// path's first op or at any later one (a second window after an update, a
// sync tool bringing another machine's copy). The file is left untouched:
// Load and a watch's report return this error instead of decoding it
// lossily, and every Save, Update and Remove of the path fails with it,
// until the file is gone or older. Such a failed op is kept and tried
// again by each Flush, not by the backoff timer: waiting does not make the
// file older. errors.Is(err, ErrNewerVersion) holds for it.
type VersionError struct {
	Path    string // the state file
	Version int    // its version
	Newest  int    // the newest version this program's migrations know
}

func (e *VersionError) Error() string {
	return "statefile: " + e.Path + " has version " + strconv.Itoa(e.Version) +
		", newer than " + strconv.Itoa(e.Newest) + " that this program knows; left untouched"
}

func (e *VersionError) Is(target error) bool { return target == ErrNewerVersion }

// checkMigrations validates the steps of OpenWith, and that T carries the
// version in its JSON (or saves would drop it, and the migrations would
// run again on the next start).
func checkMigrations[T any](ms []Migration) error {
	if len(ms) == 0 {
		return nil
	}
	for i, m := range ms {
		if m.Migrate == nil || m.Version < 1 || (i > 0 && m.Version <= ms[i-1].Version) {
			return fmt.Errorf("migration %d: versions must increase from 1, each with a Migrate", i)
		}
	}
	var zero T
	data, err := json.Marshal(zero)
	if err != nil {
		return err
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil || top["version"] == nil {
		return errors.New(`with Migrations, the type must encode a top-level "version" member`)
	}
	return nil
}

// prepare runs the path's pending migrations once, at its first op or
// read. Until it succeeds (a failed step, a newer file, an I/O error),
// every op and read of the path fails with its error, so nothing replaces
// a file that could not be migrated.
func (s *slot[T]) prepare(q *queue) error {
	if s.migrated {
		return nil
	}
	ms := s.options().Migrations
	if len(ms) == 0 {
		s.migrated = true
		return nil
	}
	err := s.migrate(q, ms)
	if err == nil {
		s.migrated = true
	}
	return err
}

// migrate brings q's file to the newest version. The old file is first
// copied, durably, to "<name>.v<old version>.bak"; the migrated file then
// replaces the path (temp file, fsync, rename, directory fsync: a crash
// leaves the old file or the new one); the copy is removed after.
func (s *slot[T]) migrate(q *queue, ms []Migration) error {
	data, err := q.s.hooks.readFile(q.path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(data) == 0) {
		return nil // nothing to migrate; saves write the newest version
	}
	if err != nil {
		return fmt.Errorf("statefile: migrate %s: %w", q.path, err)
	}
	if !json.Valid(data) || !isObject(data) {
		return nil // corrupt, or JSON with no object to carry a version: Load moves it aside as usual
	}
	newest := ms[len(ms)-1].Version
	if err := newerFile(q.path, data, newest); err != nil {
		return err
	}
	from, ok := versionOf(data)
	switch {
	case !ok:
		return nil // its "version" is no integer: corrupt
	case from == newest:
		removeBackups(q.path, ms)
		return nil
	}
	out, err := runSteps(q.path, data, from, ms)
	var v T
	if err == nil {
		err = decode(out, &v)
		if err != nil {
			err = fmt.Errorf("statefile: migrate %s to version %d: the result does not decode: %w", q.path, newest, err)
		}
	}
	if err != nil {
		// A file that decodes neither as it is nor migrated is corrupt
		// (Load moves it aside); one that does decode as it is met a
		// failing step, and is left alone.
		if decode(data, &v) != nil {
			return nil
		}
		return err
	}
	return q.replaceMigrated(data, out, from)
}

// runSteps applies the steps above version from, in order.
func runSteps(path string, data []byte, from int, ms []Migration) ([]byte, error) {
	for _, m := range ms {
		if m.Version <= from {
			continue
		}
		out, err := m.Migrate(data)
		if err == nil {
			out, err = withVersion(out, m.Version)
		}
		if err != nil {
			return nil, fmt.Errorf("statefile: migrate %s from version %d to %d: %w", path, from, m.Version, err)
		}
		data, from = out, m.Version
	}
	return append(bytes.TrimRight(data, "\n"), '\n'), nil
}

// replaceMigrated writes the migrated file, keeping the old one aside
// until the new one is durable.
func (q *queue) replaceMigrated(old, migrated []byte, from int) error {
	bak := q.path + ".v" + strconv.Itoa(from) + ".bak"
	var tr SaveTrace
	if err := q.s.hooks.commit(bak, old, &tr); err != nil {
		return fmt.Errorf("statefile: migrate %s: keeping the old file: %w", q.path, err)
	}
	tr = SaveTrace{Path: q.path}
	err := q.s.hooks.commit(q.path, migrated, &tr)
	q.committed(migrated, err)
	tr.Err = err
	q.s.trace(tr)
	if err != nil {
		return fmt.Errorf("statefile: migrate %s: %w", q.path, err)
	}
	if err := q.s.hooks.commit(bak, nil, &SaveTrace{}); err != nil {
		q.report(fmt.Errorf("statefile: migrate %s: removing %s: %w", q.path, bak, err))
	}
	return nil
}

// versioned reports whether the path has Migrations, so that its file's
// version is checked before every save and remove and at every read.
func (s *slot[T]) versioned() bool { return len(s.options().Migrations) > 0 }

// newest returns the newest version the path's migrations know.
func newestOf(ms []Migration) int { return ms[len(ms)-1].Version }

// checkNewer returns a *VersionError if data, the file a save or remove
// would replace, has a version newer than the migrations know (see
// newerFile). It runs on q's writer.
func (s *slot[T]) checkNewer(q *queue, data []byte) error {
	ms := s.options().Migrations
	if len(ms) == 0 {
		return nil
	}
	return newerFile(q.path, data, newestOf(ms))
}

// newerFile returns a *VersionError if data is a newer release's file: a
// whole JSON document (one cut short after its version member,
// {"version":2, is corrupt, and its decode moves it aside) any of whose
// version members, in any case, holds a version above newest (see
// highestVersion).
func newerFile(path string, data []byte, newest int) error {
	if v, ok := highestVersion(data); ok && v > newest && json.Valid(data) {
		return &VersionError{Path: path, Version: v, Newest: newest}
	}
	return nil
}

// view returns the bytes of the file as they decode at the newest version,
// for a read after the path's first op (Load, an Update's base, a watch's
// report): a *VersionError for a file a newer release wrote since, and for
// one an older release wrote since, the file migrated in memory (the next
// save writes the newest version; a watch never changes a file). Bytes
// that are no JSON object with a version are returned as they are, for the
// decode to report. It runs on q's writer.
func (s *slot[T]) view(q *queue, data []byte) ([]byte, error) {
	ms := s.options().Migrations
	if len(ms) == 0 {
		return data, nil
	}
	newest := newestOf(ms)
	if err := newerFile(q.path, data, newest); err != nil {
		return nil, err
	}
	v, ok := versionOf(data)
	switch {
	case !ok || v >= newest:
		return data, nil // at the newest, or no whole document: the decode reports it
	case !isObject(data):
		return data, nil
	}
	return runSteps(q.path, data, v, ms)
}

// checkVersion fails a save, on the writer, whose value does not carry the
// newest version of the path's migrations: written, it would make the next
// start run the migrations again over a file already in the new format.
func (s *slot[T]) checkVersion(data []byte) error {
	ms := s.options().Migrations
	if len(ms) == 0 {
		return nil
	}
	var top struct {
		Version *int `json:"version"`
	}
	newest := ms[len(ms)-1].Version
	if json.Unmarshal(data, &top) != nil || top.Version == nil || *top.Version != newest {
		return fmt.Errorf("the value's \"version\" must be %d, the newest migration's", newest)
	}
	return nil
}

// removeBackups removes the copies that a crash after a migration, between
// the migrated file's rename and the copy's removal, left. Errors are
// ignored: a copy left over is harmless, and the next start tries again.
func removeBackups(path string, ms []Migration) {
	for i := range ms {
		from := 0
		if i > 0 {
			from = ms[i-1].Version
		}
		_ = os.Remove(path + ".v" + strconv.Itoa(from) + ".bak")
	}
}

// withVersion sets the "version" member of a JSON object.
func withVersion(data []byte, version int) ([]byte, error) {
	if v, ok := versionOf(data); ok && v == version && bytes.Contains(data, []byte(`"version"`)) {
		return data, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return nil, errors.New("the result is not a JSON object")
	}
	for k := range top {
		if bytes.EqualFold([]byte(k), []byte("version")) {
			delete(top, k) // a "Version" left beside it could be the one a decoder keeps
		}
	}
	top["version"] = json.RawMessage(strconv.Itoa(version))
	return json.Marshal(top)
}

// isObject reports whether data is a JSON object.
func isObject(data []byte) bool {
	var top map[string]json.RawMessage
	return json.Unmarshal(data, &top) == nil && top != nil
}
