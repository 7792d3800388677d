package statefile

import "strconv"

// versionOf returns the integer "version" member of data's top-level JSON
// object (0 if it has none), and false when data is not an object or the
// member is not a non-negative integer. It reads the top level only up to
// that member, skipping the values before it without decoding them: a
// file this package or the app wrote starts with it (encoding/json writes
// a struct's fields in their order, and the version comes first in the
// formats of drafts and anchors), so the check before every save costs a
// few bytes' scan however large the file, where a json.Unmarshal would
// decode all of it. It does not validate the rest: callers that need a
// whole document check json.Valid too. It is the package's one reader of
// a file's version.
func versionOf(data []byte) (int, bool) {
	sc := scanner{b: data}
	if sc.next() != '{' {
		return 0, false
	}
	sc.i++
	for {
		switch sc.next() {
		case '}':
			return 0, true
		case '"':
		default:
			return 0, false
		}
		key, esc, ok := sc.str()
		if !ok || sc.next() != ':' {
			return 0, false
		}
		sc.i++
		if string(key) == "version" && !esc {
			return sc.version()
		}
		if esc {
			if k, err := strconv.Unquote(`"` + string(key) + `"`); err == nil && k == "version" {
				return sc.version()
			}
		}
		if !sc.skip() {
			return 0, false
		}
		switch sc.next() {
		case ',':
			sc.i++
		case '}':
			return 0, true
		default:
			return 0, false
		}
	}
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

// version parses the member's value: a non-negative integer, or null.
func (s *scanner) version() (int, bool) {
	s.next()
	start := s.i
	for s.i < len(s.b) && !isDelim(s.b[s.i]) {
		s.i++
	}
	switch {
	case string(s.b[start:s.i]) == "null":
		return 0, true // as encoding/json decodes it into an int: unchanged, 0
	case start == s.i || s.b[start] == '+':
		return 0, false
	}
	v, err := strconv.Atoi(string(s.b[start:s.i]))
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
