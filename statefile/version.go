package statefile

import (
	"bytes"
	"strconv"
)

// versionOf returns the version of data's top-level JSON object as
// encoding/json decodes it into an int field tagged `json:"version"`, the
// way an app's type that has no other field of that name reads it: a
// member whose name equals "version" under Unicode case folding
// (bytes.EqualFold, which encoding/json uses to match names), the last
// such member winning, null leaving the value as it was, and 0 without
// one. It returns false when data is not an object or such a member is
// not an integer, or the version is negative. It walks the top level once
// without decoding the values it skips; json.Unmarshal would decode all of
// it. It does not validate the rest: callers that need a whole document
// check json.Valid too.
func versionOf(data []byte) (int, bool) {
	v, ok := 0, true
	if !eachVersionMember(data, func(val []byte) {
		if ok {
			v, ok = versionValue(val, v)
		}
	}) || !ok || v < 0 {
		return 0, false
	}
	return v, true
}

// highestVersion returns the highest non-negative integer held by any
// member of data's top-level object whose name matches "version" as
// versionOf's do, and false if none holds one. A type may give another
// field the name "Version", which encoding/json then matches before the
// folded one, so the guard against replacing a newer release's file counts
// every spelling, whatever the app's type reads.
func highestVersion(data []byte) (int, bool) {
	hi, found := 0, false
	eachVersionMember(data, func(val []byte) {
		if v, ok := versionValue(val, -1); ok && v >= 0 && (!found || v > hi) {
			hi, found = v, true
		}
	})
	return hi, found
}

// eachVersionMember calls fn, in order, with the raw value of each member
// of data's top-level JSON object whose name matches "version", and
// returns false if data is not an object. With versionOf and
// highestVersion it is the package's one reader of a file's version.
func eachVersionMember(data []byte, fn func(val []byte)) bool {
	sc := scanner{b: data}
	if sc.next() != '{' {
		return false
	}
	sc.i++
	for {
		switch sc.next() {
		case '}':
			return true
		case '"':
		default:
			return false
		}
		key, esc, ok := sc.str()
		if !ok || sc.next() != ':' {
			return false
		}
		sc.i++
		sc.next()
		start := sc.i
		if !sc.skip() {
			return false
		}
		if isVersionName(key, esc) {
			fn(data[start:sc.i])
		}
		switch sc.next() {
		case ',':
			sc.i++
		case '}':
			return true
		default:
			return false
		}
	}
}

// isVersionName reports whether a member's raw name matches "version" as
// encoding/json matches a field's name: exactly, or under case folding.
func isVersionName(raw []byte, esc bool) bool {
	if esc {
		k, err := strconv.Unquote(`"` + string(raw) + `"`)
		if err != nil {
			return false // an escape Go does not share with JSON (\/) is in no spelling of "version"
		}
		raw = []byte(k)
	}
	return bytes.EqualFold(raw, []byte("version"))
}

// versionValue reads a version member's value: an integer, or null, which
// encoding/json decodes into an int by leaving it unchanged (was).
func versionValue(raw []byte, was int) (int, bool) {
	switch {
	case string(raw) == "null":
		return was, true
	case len(raw) == 0 || raw[0] == '+':
		return 0, false
	}
	v, err := strconv.Atoi(string(raw))
	return v, err == nil
}

// scanner walks JSON bytes for versionOf.
type scanner struct {
	b []byte
	i int
}

// next skips white space and returns the byte there, or 0 at the end.
func (s *scanner) next() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

// str reads the string at s.i (its opening quote) and returns its raw
// bytes, whether it holds escapes, and false if it does not end.
func (s *scanner) str() (raw []byte, esc, ok bool) {
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			esc = true
			j++
		case '"':
			s.i = j + 1
			return s.b[start:j], esc, true
		}
	}
	return nil, false, false
}

// skip skips one value, nested objects and arrays whole.
func (s *scanner) skip() bool {
	switch s.next() {
	case '"':
		_, _, ok := s.str()
		return ok
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, _, ok := s.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	}
	start := s.i // a number, true, false or null
	for s.i < len(s.b) && !isDelim(s.b[s.i]) {
		s.i++
	}
	return s.i > start
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
