package statefile

import (
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
		{`{"Version":4}`, 4, true, "another case"},
		{"{\"ver\u017fion\":4}", 4, true, "folded as encoding/json folds names"},
		{`{"ver\/sion":4}`, 0, true, "another name"},
		{`{"version":2,"drafts":{},"VERSION":5}`, 5, true, "the last one wins"},
		{`{"version":2,"version":null}`, 2, true, "null leaves it"},
		{`{"version":-1,"version":3}`, 3, true, "negative, then replaced"},
		{`{"version":3,"version":"x"}`, 0, false, "a later one not an integer"},
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

// FuzzVersionOf: on any JSON object, versionOf agrees with encoding/json
// decoding it into an int field tagged "version", which is how the app's
// own type reads the file.
func FuzzVersionOf(f *testing.F) {
	for _, s := range []string{`{"version":1,"drafts":{}}`, `{"a":[1,{"b":"}"}],"version":7}`, `{"version":null}`, `{}`, `{"Version":2,"version":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var top map[string]json.RawMessage
		if json.Unmarshal(data, &top) != nil || top == nil {
			return
		}
		wantV, wantOK := decodedVersion(data)
		v, ok := versionOf(data)
		if ok != wantOK || v != wantV {
			t.Fatalf("versionOf(%s) = %d, %t; decoded: %d, %t", data, v, ok, wantV, wantOK)
		}
	})
}

// decodedVersion is the version of a JSON object as encoding/json decodes
// it into an int field tagged "version" (absent or null: 0), and false when
// that fails or gives a negative number.
func decodedVersion(data []byte) (int, bool) {
	var top struct {
		Version int `json:"version"`
	}
	if json.Unmarshal(data, &top) != nil || top.Version < 0 {
		return 0, false
	}
	return top.Version, true
}
