package statefile

import (
	"encoding/csv"
	"os"
	"strconv"
	"sync"
	"time"
)

// traceEnv names the environment variable that, when set to a file name,
// makes every Store append one CSV row per save to that file.
const traceEnv = "OFFMAIN_TRACE"

// SaveTrace describes one save or remove that ran. Durations are the time
// spent in each step on the writer.
type SaveTrace struct {
	Path       string
	Queued     time.Duration // from the oldest Save this op carries (the first it superseded) to the writer taking it
	Encode     time.Duration // JSON encoding
	Write      time.Duration // temp file create and write
	Sync       time.Duration // fsync of the temp file (Durable only)
	Rename     time.Duration // rename over the destination (or the remove)
	DirSync    time.Duration // fsync of the directory (Durable only; zero on Windows, which has none)
	Bytes      int           // encoded size; 0 for a remove
	Superseded int           // queued saves this one replaced before they ran
	Remove     bool          // the op was a Remove
	Unchanged  bool          // the save's bytes were what this Store last wrote and the file still held them: nothing was written or fsynced
	Retry      bool          // the op ran again after it failed (see the package docs, "Failures and retries")
	Err        error         // nil when the save reached the disk
}

// trace hands tr to Options.Trace and the CSV file, if any.
func (s *Store) trace(tr SaveTrace) {
	if s.opts.Trace != nil {
		s.opts.Trace(tr)
	}
	if s.tracer != nil {
		s.tracer.write(tr)
	}
}

var traceHeader = []string{"time", "path", "op", "queued_us", "encode_us", "write_us", "sync_us", "rename_us", "dirsync_us", "bytes", "superseded", "err"}

// csvTracer appends rows to the OFFMAIN_TRACE file. It opens the file for
// each row (O_APPEND), so no descriptor outlives a Store and rows from
// several Stores or processes interleave whole.
type csvTracer struct {
	name string
	mu   sync.Mutex // serialises rows from parallel writers
}

func (c *csvTracer) write(tr SaveTrace) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, err := os.OpenFile(c.name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	w := csv.NewWriter(f)
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		w.Write(traceHeader) //nolint:errcheck // Flush reports it
	}
	w.Write(traceRow(tr)) //nolint:errcheck // Flush reports it
	w.Flush()
}

func traceRow(tr SaveTrace) []string {
	op, errText := "save", ""
	switch {
	case tr.Remove:
		op = "remove"
	case tr.Unchanged:
		op = "unchanged"
	}
	if tr.Err != nil {
		errText = tr.Err.Error()
	}
	us := func(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }
	return []string{
		time.Now().UTC().Format(time.RFC3339Nano), tr.Path, op,
		us(tr.Queued), us(tr.Encode), us(tr.Write), us(tr.Sync), us(tr.Rename), us(tr.DirSync),
		strconv.Itoa(tr.Bytes), strconv.Itoa(tr.Superseded), errText,
	}
}
