package statefile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// sweepTemps removes the temp files a crash left beside path: "." + the
// stem of path's name + a non-negative int64 in decimal (tempname.go; the
// stem is the name itself unless the name is long). The directory is
// read once per Store (listing), not once per path: a thousand paths
// opened in one directory cost one scan. Each path then tries only the
// names of its own shape, and skips those that a live writer in another
// process or Store has claimed (tempclaim.go). It holds the directory's
// exclusive lock while it removes (dirlock_unix.go), so no writer is
// between creating and claiming a temp file meanwhile; when writers hold
// it, it removes nothing this time. Errors are ignored: a leftover is
// harmless, and the save after it reports a real disk problem.
func (s *Store) sweepTemps(path string) {
	dir, base := filepath.Split(path)
	l := s.listing(dir)
	names := l.take(base, func(stem string) bool { return s.isOpenStem(dir, stem, base) })
	if len(names) == 0 {
		return
	}
	dl := lockDirSweep(dir)
	if dl == nil {
		return // a save is between creating and claiming a temp file, or no locks here
	}
	defer dl.release()
	for _, name := range names {
		removeIfDead(filepath.Join(dir, name))
	}
}

// dirListing is one read of a directory, shared by the sweeps of the
// Store's paths in it. Temp files made after the read belong to writers
// that were alive then, or crashed after the Store started; the next Store
// sweeps those. It keeps only what a sweep can use, not every name of the
// directory (a home directory or a Downloads folder holds thousands, for
// the Store's whole life): the names that may be temp files, and the names
// of the siblings that such a name could belong to (see isTempName).
type dirListing struct {
	once sync.Once

	mu       sync.Mutex          // protects the fields below
	temps    map[string]bool     // dot-prefixed regular files not yet taken by a sweep
	siblings map[string][]string // the stems a temp name's shape could belong to -> the names in the directory with that stem (tempname.go)
}

// listing returns dir's listing, reading the directory on first use.
func (s *Store) listing(dir string) *dirListing {
	s.mu.Lock()
	l := s.dirs[dir]
	if l == nil {
		l = &dirListing{}
		s.dirs[dir] = l
	}
	s.mu.Unlock()
	l.once.Do(func() {
		entries, err := s.hooks.readDir(dir)
		if err != nil {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.keep(entries)
	})
	return l
}

// keep notes, from a directory's entries, the possible temp files and the
// siblings their names could belong to: for ".state1123", the entries whose
// stem is "state", "state1", "state11" or "state112" (isTempName's
// candidates; a name's stem is the name itself unless it is long,
// tempname.go). l.mu is held.
func (l *dirListing) keep(entries []os.DirEntry) {
	owners := make(map[string]bool)
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, ".") {
			continue
		}
		if l.temps == nil {
			l.temps = make(map[string]bool)
		}
		l.temps[name] = true
		for _, c := range ownerCandidates(name) {
			owners[c] = true
		}
	}
	for _, e := range entries {
		if stem := tempStem(e.Name()); owners[stem] {
			if l.siblings == nil {
				l.siblings = make(map[string][]string)
			}
			l.siblings[stem] = append(l.siblings[stem], e.Name())
		}
	}
}

// ownerCandidates returns the stems whose temp names a file named name
// could be: "." + stem + digits, with at least one digit and at most 19.
func ownerCandidates(name string) []string {
	rest := name[1:]
	var out []string
	for i := len(rest) - 1; i >= 0 && len(rest)-i <= 19 && rest[i] >= '0' && rest[i] <= '9'; i-- {
		if i > 0 {
			out = append(out, rest[:i])
		}
	}
	return out
}

// take removes from l and returns the temp names of base's shape that
// belong to base rather than to a sibling (see isTempName). open reports
// whether a path of the directory other than base, with that stem, is open
// in the Store. Once no temp name is left, the listing keeps nothing.
func (l *dirListing) take(base string, open func(stem string) bool) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	other := func(stem string) bool { // a sibling of base has this stem
		for _, name := range l.siblings[stem] {
			if name != base {
				return true
			}
		}
		return open(stem)
	}
	var names []string
	for name := range l.temps {
		if isTempName(name, base, other) {
			names = append(names, name)
			delete(l.temps, name)
		}
	}
	if len(l.temps) == 0 {
		l.temps, l.siblings = nil, nil
	}
	return names
}

// isOpenStem reports whether this Store has opened a path other than base,
// in the directory of a path being swept, whose temp stem is stem: the path
// named stem, or a long name whose stem it is (tempname.go).
func (s *Store) isOpenStem(dir, stem, base string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[filepath.Join(dir, stem)]; ok && stem != base {
		return true
	}
	if !isLongStem(stem) {
		return false
	}
	for p := range s.files {
		if d, name := filepath.Split(p); d == dir && name != base && len(name) > maxStemBytes && tempStem(name) == stem {
			return true
		}
	}
	return false
}

// isTempName reports whether name has the shape of a temp file made for
// base: "." + tempStem(base) + the decimal form of a non-negative int64
// (strconv.FormatInt of rand.Int64: no sign, no leading zero, at most 19
// digits). The shape alone cannot tell ".state1123" of "state" from that
// of "state1", nor a long name's from that of a sibling named after its
// stem; other says whether a sibling other than base has a given stem (in
// the directory or open in the Store), and a name that fits a sibling's
// shape is the sibling's, or at least not surely base's: it is left alone.
// Other writers that use renameio's shape (renameio itself, which does not
// claim its temp files) are so never swept by a neighbour's sweep.
func isTempName(name, base string, other func(stem string) bool) bool {
	stem := tempStem(base)
	digits, ok := strings.CutPrefix(name, "."+stem)
	if !ok || !isInt64Decimal(digits) {
		return false
	}
	if other(stem) {
		return false // a sibling's temp names have this very shape
	}
	for i := 1; i < len(digits); i++ {
		if (digits[i] != '0' || i == len(digits)-1) && other(stem+digits[:i]) {
			return false // the temp file of the sibling with stem stem+digits[:i]
		}
	}
	return true
}

// isInt64Decimal reports whether d is how strconv.FormatInt writes a
// non-negative int64.
func isInt64Decimal(d string) bool {
	if d == "" || len(d) > 19 || (d[0] == '0' && d != "0") {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(d, 10, 64)
	return err == nil
}
