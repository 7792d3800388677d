package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// FileOptions configures one path, for [OpenWith]. The zero value is the
// default for every field, and is what [Open] uses.
type FileOptions[T any] struct {
	// Default, if set, gives the value of a missing or empty file: Load
	// returns it with a nil error, and an Update starts from it. An empty
	// file is then not corrupt (AndroidX DataStore reads one as its
	// default too) and is left in place. It is called on the path's writer
	// each time, so a map or slice in its result is never shared. Nil
	// means the zero value, with Load's error matching fs.ErrNotExist for a
	// missing file and [ErrCorrupt] for an empty one.
	Default func() T

	// OnCorrupt, if set, gives the value that replaces a file that does
	// not parse (DataStore's ReplaceFileCorruptionHandler). It is called on
	// the path's writer after the bytes were moved aside, with the error
	// naming where they went; its value is then written to the path and
	// Load returns it with a nil error. If it returns an error, Load
	// returns the zero value and an error matching both [ErrCorrupt] and
	// that error, and nothing is written. If the bytes could not be moved
	// aside, Load returns its value with the [*CorruptError], and nothing
	// is written over them. Nil means Load reports the corruption with the
	// zero value.
	OnCorrupt func(err *CorruptError) (T, error)

	// Migrations are the steps that bring an older file to the newest
	// version, in increasing order of Version (see [Migration]); they run
	// on the path's writer at its first read or op. T must encode a
	// top-level "version" member, and every value saved (Default's too)
	// must hold the newest Version: a save that does not fails like an
	// encode error. Nil means the file's version is never read.
	Migrations []Migration
}

// OpenWith is [Open] with options for the path. The first OpenWith of a
// path fixes them for the Store's life; a later OpenWith or Open of the
// same path shares them (its own options are not used), as a package that
// reopens its file on one Store does: give every OpenWith of a path the
// same options. Open the path with OpenWith
// before any Open of it, or a Load through that Open may run before the
// options are in place. It returns an error if the Migrations are not in
// increasing order of Version from 1, or if T does not encode as a JSON
// object with a "version" member while Migrations are set.
func OpenWith[T any](s *Store, path string, opts FileOptions[T]) (*File[T], error) {
	if err := checkMigrations[T](opts.Migrations); err != nil {
		return nil, fmt.Errorf("statefile: %s: %w", path, err)
	}
	f, err := Open[T](s, path)
	if err != nil {
		return nil, err
	}
	f.slot.opts.CompareAndSwap(nil, &opts) // a later OpenWith keeps the first one's
	return f, nil
}

// options returns the path's options; the zero value without OpenWith.
func (s *slot[T]) options() FileOptions[T] {
	if o := s.opts.Load(); o != nil {
		return *o
	}
	return FileOptions[T]{}
}

// zero is the value of a missing file: the default, or the zero value.
func (s *slot[T]) zero() T {
	if d := s.options().Default; d != nil {
		return d()
	}
	var zero T
	return zero
}

// read is Load's read (see load).
func (s *slot[T]) read(q *queue) (T, error) {
	v, _, err := s.readValue(q)
	return v, err
}

// readValue reads and decodes q's file on its writer, after the pending
// migrations, checking its version again (see view). replaced reports
// whether v is OnCorrupt's value.
func (s *slot[T]) readValue(q *queue) (v T, replaced bool, err error) {
	var zero T
	if err := s.prepare(q); err != nil {
		return zero, false, err
	}
	o := s.options()
	data, err := q.s.hooks.readFile(q.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			q.readGone()
			if o.Default != nil {
				return o.Default(), false, nil
			}
		}
		return zero, false, err // an *fs.PathError; errors.Is(err, fs.ErrNotExist) for no file
	}
	if len(data) == 0 && o.Default != nil {
		return o.Default(), false, nil
	}
	raw, err := s.view(q, data)
	if err != nil {
		q.readBack(data)        // someone else's: a Flush no longer puts back this Store's last save
		return zero, false, err // a newer release wrote it since the path's first op: never decoded lossily
	}
	derr := decode(raw, &v)
	if derr == nil {
		q.readBack(data)
		return v, false, nil
	}
	err = q.quarantine(derr)
	if o.OnCorrupt == nil {
		return zero, false, err
	}
	return s.replace(q, o.OnCorrupt, err)
}

// replace asks OnCorrupt for the value of a file just found corrupt, and
// writes it unless the bytes are still at the path.
func (s *slot[T]) replace(q *queue, onCorrupt func(*CorruptError) (T, error), err error) (T, bool, error) {
	var zero T
	var ce *CorruptError
	errors.As(err, &ce) // quarantine always returns one
	v, herr := onCorrupt(ce)
	if herr != nil {
		return zero, false, fmt.Errorf("%w; replacing it: %w", err, herr)
	}
	if q.disk.corrupt {
		return v, true, err
	}
	if werr := s.writeNow(q, v); werr != nil {
		q.report(werr) // Load still returns the replacement: the app asked for it
	}
	return v, true, nil
}

// writeNow encodes v and commits it on q's writer, outside the queue's
// ops (a replacement for a corrupt file), traced like a save.
func (s *slot[T]) writeNow(q *queue, v T) error {
	tr := SaveTrace{Path: q.path}
	keep := s.taking
	s.taking = v
	start := time.Now()
	data, err := s.encode(q.path)
	s.taking = keep
	tr.Encode = time.Since(start)
	tr.Bytes = len(data)
	if err == nil {
		err = q.s.hooks.commit(q.path, data, &tr)
		q.committed(data, err)
	}
	tr.Err = err
	q.s.trace(tr)
	return err
}
