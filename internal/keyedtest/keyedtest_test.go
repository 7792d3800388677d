package keyedtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestDocExample(t *testing.T) {
	file := filepath.Join(t.TempDir(), "doc.go")
	doc := "// Package p is an example.\n//\n//\t{\n//\t  \"version\": 1,\n//\t  \"keys\": [\"a\"]\n//\t}\npackage p\n"
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	assert.Equal(t, `{"version":1,"keys":["a"]}`, string(DocExample(t, file)))
}

func TestChanges(t *testing.T) {
	var c Changes
	c.Fn([]string{"a"})
	c.Fn([]string{"b", "c"})
	assert.Equal(t, [][]string{{"a"}, {"b", "c"}}, c.Take(), "calls: got, want")
	assert.Empty(t, c.Take(), "calls after Take: got, want none")
}

func TestNext(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	assert.Equal(t, 7, Next(t, ch, "value"))
}
