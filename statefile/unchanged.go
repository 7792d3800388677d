package statefile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
)

// Unchanged saves. DataStore skips a write whose value did not change
// (SingleProcessDataStore.writeData: "if (curData == newData) return";
// tested by DataStoreTest.testWriteSameValueSkipDisk) and so does Android's
// SharedPreferences (EditorImpl.commitToMemory sets changesMade only when a
// value differs, and writeToFile skips the write when the file exists and
// nothing changed). drafts and anchors often hand statefile the same bytes
// again. A save whose encoded bytes equal what this Store last wrote to the
// path, while the file still holds them, so does no write, no rename and
// no fsync; its SaveTrace says Unchanged.
//
// "Still holds them" is checked by reading the file and comparing its
// bytes, not by comparing an lstat(2) with the one taken after the write.
// Filesystems that cache attributes answer lstat from the cache: an NFS
// client for up to actimeo (nfs(5): acregmin 3 s to acregmax 60 s by
// default), SMB for actimeo (mount.cifs(8): 1 s), FUSE for the attribute
// timeout its daemon sets (go-fuse: 1 s). Another client's replacement of
// the file with bytes of the same size is then invisible to lstat, and the
// skipped save would leave the file holding the other client's bytes. An
// open(2), by contrast, revalidates: NFS's close-to-open consistency
// (nfs(5), "Data and metadata coherence") and FUSE's open, which drops the
// file's cached pages unless the daemon asks to keep them (FOPEN_KEEP_CACHE
// in include/uapi/linux/fuse.h; fs/fuse/file.c), read what the server holds
// (checked on Linux 6.18 with go-fuse's loopback: TestUnchangedSaveOnAttributeCache). Checking only on filesystems known to keep attributes
// coherent (by statfs(2) magic: ext4, xfs, btrfs, tmpfs) would keep the
// lstat's speed there, but it would need a list kept up to date for every
// platform and would lose the skip where it helps most, on a slow network
// home. The read costs a small file's open, read and close; it runs only
// for a save whose bytes are what this Store last wrote, and it still
// saves both fsyncs (the figures are in the package docs).

// lastWrite is what a path's writer knows of its own last write.
type lastWrite struct {
	ok  bool // the last op was a save that reached the disk
	sum seen // its bytes
}

// beforeWrite reads the file a save of data (nil: a remove) would replace,
// when a check needs its bytes: the version check of a path with
// Migrations (a file a newer release wrote is never replaced), and, for a
// save of the bytes this Store last wrote, the unchanged check. It reports
// whether the file holds data already. It runs on q's writer.
func (q *queue) beforeWrite(data []byte) (unchanged bool, err error) {
	versioned := q.slot.versioned()
	maybeSame := data != nil && q.last.ok && !q.corruptInPlace && q.last.sum == seenBytes(data)
	if !versioned && !maybeSame {
		return false, nil
	}
	cur, err := q.s.readFile(q.path)
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
	return maybeSame && bytes.Equal(cur, data), nil
}

// noteWrite records the outcome of a commit for unchanged saves: a save
// that reached the disk is remembered; anything else forgets the last
// write.
func (q *queue) noteWrite(data []byte, err error) {
	q.last = lastWrite{}
	if err == nil && data != nil {
		q.last = lastWrite{ok: true, sum: seenBytes(data)}
	}
}
