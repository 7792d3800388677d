package agent

import (
	"regexp"
	"strings"
)

// output is an agent's stdout and stderr: it sends them to the UI line by
// line, one message per write os/exec makes.
type output struct {
	chat    string
	send    func(any)
	clean   func(string) string // Options.Clean
	partial []byte              // the start of a line whose end has not come yet
}

func (o *output) Write(b []byte) (int, error) {
	var lines []string
	lines, o.partial = o.splitLines(append(o.partial, b...))
	if len(lines) > 0 {
		o.send(Output{Chat: o.chat, Lines: lines})
	}
	return len(b), nil
}

// flush sends a last line that had no end. Call it after cmd.Wait.
func (o *output) flush() {
	if len(o.partial) > 0 {
		o.send(Output{Chat: o.chat, Lines: []string{o.clean(string(o.partial))}})
		o.partial = nil
	}
}

// maxLine is where a line without an end is cut.
const maxLine = 4096

// splitLines returns the complete lines in b and what is left after them.
func (o *output) splitLines(b []byte) (lines []string, rest []byte) {
	for {
		i := strings.IndexByte(string(b), '\n')
		if i < 0 {
			if len(b) > maxLine {
				lines, b = append(lines, o.clean(string(b[:maxLine]))), b[maxLine:]
				continue
			}
			return lines, b
		}
		lines, b = append(lines, o.clean(string(b[:i]))), b[i+1:]
	}
}

// escapes matches the terminal control sequences agents print (CSI, such
// as colours, and OSC, such as titles; ECMA-48 sections 5.4 and 8.3.89).
var escapes = regexp.MustCompile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(\x07|\x1b\\\\)")

// clean is the default Options.Clean: it drops terminal control sequences
// and carriage returns, and shows tabs as spaces.
func clean(s string) string {
	s = escapes.ReplaceAllString(s, "")
	return strings.NewReplacer("\r", "", "\t", "    ").Replace(s)
}
