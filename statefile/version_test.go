package statefile

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionOf(t *testing.T) {
	for _, tc := range []struct {
		in   string
		v    int
		ok   bool
		name string
	}{
		{`{"version":3,"text":"x"}`, 3, true, "first member"},
		{` { "a" : {"version":9,"b":[1,"}",{"c":"\""}]} , "s":"a\"b,}" , "version" : 2 } `, 2, true, "after nested values"},
		{`{"text":"x"}`, 0, true, "no version"},
		{`{}`, 0, true, "empty object"},
		{`{"ver\u0073ion":4}`, 4, true, "escaped name"},
		{`{"Version":4}`, 0, true, "another name"},
		{`{"version":-1}`, 0, false, "negative"},
		{`{"version":1.5}`, 0, false, "not an integer"},
		{`{"version":"2"}`, 0, false, "a string"},
		{`{"version":+2}`, 0, false, "a plus sign"},
		{`{"version":}`, 0, false, "no value"},
		{`[{"version":2}]`, 0, false, "an array"},
		{`"version"`, 0, false, "a string document"},
		{``, 0, false, "empty"},
		{`{"a":"unterminated`, 0, false, "torn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := versionOf([]byte(tc.in))
			assert.Equal(t, tc.ok, ok, "ok of %s", tc.in)
			assert.Equal(t, tc.v, v, "version of %s", tc.in)
		})
	}
}

// FuzzVersionOf: on any JSON object without duplicate names, versionOf
// agrees with encoding/json decoding the whole top level.
func FuzzVersionOf(f *testing.F) {
	for _, s := range []string{`{"version":1,"drafts":{}}`, `{"a":[1,{"b":"}"}],"version":7}`, `{"version":null}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var top map[string]json.RawMessage
		if json.Unmarshal(data, &top) != nil || top == nil || hasDuplicateNames(data) {
			return
		}
		wantV, wantOK := decodedVersion(top)
		v, ok := versionOf(data)
		if ok != wantOK || v != wantV {
			t.Fatalf("versionOf(%s) = %d, %t; decoded: %d, %t", data, v, ok, wantV, wantOK)
		}
	})
}

// hasDuplicateNames reports whether data's top-level object names a member
// twice, where encoding/json keeps the last and versionOf the first.
func hasDuplicateNames(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return true
	}
	seen := map[string]bool{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return true
		}
		name, _ := k.(string)
		if seen[name] {
			return true
		}
		seen[name] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return true
		}
	}
	return false
}

// decodedVersion is the version of a decoded top level: its "version"
// member as encoding/json decodes it into an int (absent or null: 0), and
// false when it is not a non-negative integer.
func decodedVersion(top map[string]json.RawMessage) (int, bool) {
	raw, ok := top["version"]
	if !ok {
		return 0, true
	}
	var v int
	if json.Unmarshal(raw, &v) != nil || v < 0 {
		return 0, false
	}
	return v, true
}
