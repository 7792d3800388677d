package statefile

import "os"

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
// "Still holds them" is checked with one lstat(2) of the path, compared
// with the one taken right after the write: the same device and inode,
// size, modification time and change time. A rename over the path (an
// editor's save, another Store's) changes the inode; a write in place
// changes mtime and ctime. The hole: a program that rewrites the file in
// place with bytes of the same length, within one tick of the filesystem's
// timestamps (ext4 keeps nanoseconds, but the kernel stamps from a coarse
// clock, a jiffy of 1-10 ms, unless the filesystem has multigrain
// timestamps: fs/inode.c, current_time), and then sets mtime back
// (utimensat(2); ctime cannot be set) is not seen; the save is skipped and
// the file keeps the other program's bytes until the next change.

// lastWrite is what a path's writer knows of its own last write.
type lastWrite struct {
	ok    bool      // the last op was a save that reached the disk, and was stamped
	sum   seen      // its bytes
	stamp fileStamp // the path's metadata right after it
}

// unchanged reports whether data is what q's writer last wrote and the file
// still holds it. It runs on q's writer.
func (q *queue) unchanged(data []byte) bool {
	if !q.last.ok || q.corruptInPlace || q.last.sum != seenBytes(data) {
		return false
	}
	st, ok := statStamp(q.path)
	return ok && st == q.last.stamp
}

// noteWrite records the outcome of a commit for unchanged: a save that
// reached the disk is stamped; anything else forgets the last write.
func (q *queue) noteWrite(data []byte, err error) {
	q.last = lastWrite{}
	if err != nil || data == nil {
		return
	}
	if st, ok := statStamp(q.path); ok {
		q.last = lastWrite{ok: true, sum: seenBytes(data), stamp: st}
	}
}

// statStamp returns path's stamp from lstat(2), and false if it is not a
// regular file or cannot be read.
func statStamp(path string) (fileStamp, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileStamp{}, false
	}
	return stampOf(fi), true
}
