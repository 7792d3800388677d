package main

import (
	"regexp"
	"strings"
)

// output is an agent's stdout and stderr: it sends them to the UI goroutine line
// by line, one message per write os/exec makes.
type output struct {
	chat    string
	send    func(any)
	partial []byte // the start of a line whose end has not come yet
}

func (o *output) Write(b []byte) (int, error) {
	var lines []string
	lines, o.partial = splitLines(append(o.partial, b...))
	if len(lines) > 0 {
		o.send(agentOutputMsg{chat: o.chat, lines: lines})
	}
	return len(b), nil
}

// flush sends a last line that had no end. Call it after cmd.Wait.
func (o *output) flush() {
	if len(o.partial) > 0 {
		o.send(agentOutputMsg{chat: o.chat, lines: []string{clean(o.partial)}})
		o.partial = nil
	}
}

// maxLine is where a line without an end is cut.
const maxLine = 4096

// splitLines returns the complete lines in b and what is left after them.
func splitLines(b []byte) (lines []string, rest []byte) {
	for {
		i := strings.IndexByte(string(b), '\n')
		if i < 0 {
			if len(b) > maxLine {
				lines, b = append(lines, clean(b[:maxLine])), b[maxLine:]
				continue
			}
			return lines, b
		}
		lines, b = append(lines, clean(b[:i])), b[i+1:]
	}
}

// escapes matches the terminal control sequences agents print (CSI, such
// as colours, and OSC, such as titles; ECMA-48 sections 5.4 and 8.3.89).
var escapes = regexp.MustCompile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(\x07|\x1b\\\\)")

// clean drops terminal control sequences, carriage returns and tabs (shown
// as spaces) from a line.
func clean(b []byte) string {
	s := escapes.ReplaceAllString(string(b), "")
	return strings.NewReplacer("\r", "", "\t", "    ").Replace(s)
}
