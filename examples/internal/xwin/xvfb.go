package xwin

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Server is a private X server (Xvfb) on a display of its own.
type Server struct {
	Display string // ":N"
	Pid     int    // the server's process, for reading its CPU time

	cmd *exec.Cmd
}

// StartXvfb starts Xvfb with one 800x600x24 screen and no TCP listener. It
// picks a free display number itself and writes it to -displayfd, so that
// two servers started at once never collide. extra are more Xvfb(1) options.
func StartXvfb(extra ...string) (*Server, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	args := append([]string{"-displayfd", "3", "-screen", "0", "800x600x24", "-nolisten", "tcp"}, extra...)
	x := exec.Command("Xvfb", args...)
	x.ExtraFiles = []*os.File{w}
	var stderr bytes.Buffer // its reasons, if it reports no display; nothing else is read
	x.Stderr = &stderr
	err = x.Start()
	_ = w.Close()
	if err != nil {
		return nil, fmt.Errorf("xwin: starting Xvfb (Debian: xvfb): %w", err)
	}
	s := &Server{Pid: x.Process.Pid, cmd: x}
	line := make(chan string, 1)
	go func() { l, _ := bufio.NewReader(r).ReadString('\n'); line <- strings.TrimSpace(l) }()
	select {
	case n := <-line:
		if n != "" {
			s.Display = ":" + n
			return s, nil
		}
	case <-time.After(time.Minute):
	}
	s.Stop() // closes the pipe's far end: the reader ends
	return nil, fmt.Errorf("xwin: Xvfb reported no display: %s", bytes.TrimSpace(stderr.Bytes()))
}

// Stop kills the server and waits for it.
func (s *Server) Stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}
