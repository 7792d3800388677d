package statefile

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"path/filepath"
	"slices"
)

// diskState is what a path's writer knows of the file on disk: what this
// Store last wrote there or read from it, the states a watch takes as not
// news, and whether unparsable bytes nobody moved aside are there. The
// writer alone uses it, but for wrote, which a Flush reads too.
type diskState struct {
	// holds is the content the file held when this Store last wrote or
	// read it. A save of those bytes writes nothing, once a read shows the
	// file still holds them (see beforeWrite).
	holds seen

	// wrote is the bytes of this Store's last save that reached the disk,
	// while nothing since says someone else changed the file; nil after a
	// remove or a failure. A Flush checks that the file still holds them,
	// and writes them again when it does not (see verify). Written on the
	// writer under the queue's mu; never changed in place.
	wrote []byte

	// synced says the bytes the file holds reached it through this
	// Store's durable commit. Bytes another program wrote, which a save
	// then finds unchanged, get an fsync before the save counts as durable.
	synced bool

	// known holds the states of the file that are not news to the watches:
	// what this Store last put there and what a watch last reported. After
	// a failed commit the disk holds the old or the new state (the rename
	// may have run before the directory fsync failed), so both stay known.
	// Empty means unknown: the next check reports whatever it finds.
	known []seen

	// corrupt says that unparsable bytes nobody moved aside are at the
	// path (a Load that could not move them, or a watch's check, which
	// never moves a file): the next save or remove moves them aside first,
	// and fails rather than replace bytes nobody has seen.
	corrupt bool
}

// seen is one state of the file, by content: absent, or present with this
// hash of its bytes.
type seen struct {
	present bool
	sum     uint64
}

// hashSeed is the seed of the content hashes; per process, as they are
// compared only within it.
var hashSeed = maphash.MakeSeed()

func seenBytes(data []byte) seen { return seen{present: true, sum: maphash.Bytes(hashSeed, data)} }

// seenOf is data's state: absent for nil (a remove).
func seenOf(data []byte) seen {
	if data == nil {
		return seen{}
	}
	return seenBytes(data)
}

const maxKnown = 4 // states kept after failed commits in a row

func (d *diskState) isKnown(s seen) bool { return slices.Contains(d.known, s) }
func (d *diskState) setKnown(s seen)     { d.known = append(d.known[:0], s) }

func (d *diskState) addKnown(s seen) {
	if len(d.known) == maxKnown {
		d.known = append(d.known[:0], d.known[1:]...)
	}
	d.known = append(d.known, s)
}

// committed records what a commit put at the path (data nil: a remove), or
// that it failed and the path may hold either state.
func (q *queue) committed(data []byte, err error) {
	d := &q.disk
	s := seenOf(data)
	if err != nil {
		d.addKnown(s)
		d.holds = seen{}
		q.setWrote(nil)
		return
	}
	d.setKnown(s)
	d.holds = s
	d.synced = q.s.opts.Durability == Durable
	q.setWrote(data)
	d.corrupt = false
	q.watch.bad = badBytes{}
}

// readBack records bytes the writer read from the path (a Load, the base
// of an Update): a save of the same bytes need not write. Bytes other than
// this Store's last write mean someone else wrote the file: it is theirs
// now, and a Flush no longer puts back what this Store wrote.
func (q *queue) readBack(data []byte) {
	if w := q.lastWrite(); w != nil && !bytes.Equal(w, data) {
		q.setWrote(nil)
		q.disk.synced = false
	}
	q.disk.holds = seenBytes(data)
}

// setWrote records this Store's last save that landed (nil: none to keep
// on disk).
func (q *queue) setWrote(data []byte) {
	q.mu.Lock()
	q.disk.wrote = data
	q.mu.Unlock()
}

// lastWrite returns this Store's last save that landed, or nil.
func (q *queue) lastWrite() []byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.disk.wrote
}

// readGone records that the writer found no file at the path: like
// other bytes, a removal seen is someone else's, and a Flush no longer
// puts back what this Store wrote.
func (q *queue) readGone() {
	q.disk.holds = seen{}
	q.disk.synced = false
	q.setWrote(nil)
}

// beforeWrite reads the file a save of data (nil: a remove) would replace,
// when a check needs its bytes: the version check of a path with
// Migrations (a file a newer release wrote is never replaced), and, for a
// save of the bytes the file held when this Store last wrote or read it,
// the unchanged check. It reports whether the file holds data already.
//
// Unchanged saves: DataStore skips a write whose value did not change
// (SingleProcessDataStore.writeData) and so does Android's
// SharedPreferences (EditorImpl.commitToMemory). "Holds them still" is a
// read of the file and a comparison of its bytes, not an lstat(2): an NFS,
// SMB or FUSE client answers lstat from its attribute cache, so another
// client's replacement of the file with bytes of the same size would go
// unseen and the skipped save would leave the other client's bytes; an
// open(2) revalidates (NFS's close-to-open consistency, nfs(5); FUSE drops
// the file's cached pages at open unless the daemon sets FOPEN_KEEP_CACHE,
// fs/fuse/file.c). The read runs only for a save of the bytes the file is
// thought to hold, and saves both fsyncs.
func (q *queue) beforeWrite(data []byte) (unchanged bool, err error) {
	versioned := q.slot.versioned()
	maybeSame := data != nil && q.disk.holds.present && !q.disk.corrupt && q.disk.holds == seenBytes(data)
	if !versioned && !maybeSame {
		return false, nil
	}
	cur, err := q.s.hooks.readFile(q.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil && versioned:
		// Its version cannot be known, so it is not replaced: the read's
		// error is most likely the write's too, and the op is retried.
		return false, fmt.Errorf("statefile: %s: reading its version before replacing it: %w", q.path, err)
	case err != nil:
		return false, nil // cannot tell: write
	}
	if versioned {
		if err := q.slot.checkNewer(q, cur); err != nil {
			return false, err
		}
	}
	same := maybeSame && bytes.Equal(cur, data)
	if same && !q.disk.synced && q.s.opts.Durability == Durable {
		// Another program's bytes, perhaps never fsynced: make them as
		// durable as a save of ours, without writing them again.
		if err := syncFile(q.path); err != nil {
			return false, wrapDisk("save", q.path, err)
		}
		if err := q.s.hooks.syncDir(filepath.Dir(q.path)); err != nil {
			return false, wrapDisk("save", q.path, err)
		}
		q.disk.synced = true
	}
	if same {
		q.setWrote(data) // the file holds what the app saved: a Flush keeps it there
	}
	return same, nil
}

// verify is, on the writer, a Flush's check (flush.go, startCheck) that
// the file still holds the last save this Store wrote. A file removed
// since gets that save again. Bytes that do not parse are moved aside
// first, as a Load moves a corrupt file, and the save is written after
// them; if they cannot be moved, nothing is written over them. Bytes that
// parse, and a newer release's file, are someone else's save: last writer
// wins, and they are left as they are. A write that fails is reported,
// and every Flush tries it again until one lands or a newer op of the
// path replaces it.
func (q *queue) verify() error {
	q.mu.Lock()
	data, skip := q.disk.wrote, q.watch.ever || q.retry.ended
	q.mu.Unlock()
	if data == nil || skip {
		return nil
	}
	cur, err := q.s.hooks.readFile(q.path)
	switch {
	case err == nil && bytes.Equal(cur, data):
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil // cannot tell: the file is not known to be gone
	case err == nil && q.slot.parses(q, cur):
		q.readBack(cur) // someone else's save
		return nil
	case err == nil:
		qerr := q.quarantine(errors.New("unparsable bytes found in place of the last save"))
		if q.disk.corrupt {
			// Still in place: nothing is written over them, and the next
			// Flush tries again.
			q.setWrote(data)
			return qerr
		}
		q.report(qerr) // the app hears where the bytes went
	}
	tr := SaveTrace{Path: q.path, Bytes: len(data)}
	err = q.s.hooks.commit(q.path, data, &tr)
	tr.Err = err
	q.s.trace(tr)
	if err != nil {
		q.disk.addKnown(seenBytes(data))
		// As a retry's failure: OnError hears of it once, not at each
		// Flush that fails the same way (noteOutcome).
		if text := err.Error(); !q.retry.owed || text != q.retry.owedText {
			q.report(err)
			q.retry.owedText = text
		}
		return err
	}
	q.committed(data, nil)
	if q.retry.owed {
		q.retry.owed, q.retry.owedText = false, ""
		q.s.recovered(q.path)
	}
	return nil
}
