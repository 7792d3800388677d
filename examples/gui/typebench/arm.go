package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/offmain/offmain/examples/internal/xwin"
)

// sample is one key: when typebench sent it and when the app saw it pass
// each hop, in Unix nanoseconds.
type sample struct {
	sent, server                int64 // before the XTEST request; after the server answered the round trip behind it
	event, handler, save, frame int64 // from the app's probe
}

// result is one arm over all rounds.
type result struct {
	arm    arm
	rounds []roundResult
}

// roundResult is one arm's run in one round.
type roundResult struct {
	samples []sample
	frames  []frame  // the frames drawn while the keys were sent
	flush   string   // the app's flush report
	app, x  cpuUse   // the app's and the X server's threads over the typing
	calib   calibUse // typebench's own fixed work during the warm-up
}

// runArm runs one arm once.
func runArm(bin, dir string, a arm, c config) (roundResult, error) {
	var res roundResult
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return res, err
	}
	srv, err := xwin.StartXvfb()
	if err != nil {
		return res, err
	}
	defer srv.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	probe := filepath.Join(dir, "keys.csv")
	cmd, log, err := startApp(ctx, bin, dir, srv.Display, probe, a, c.agent)
	if err != nil {
		return res, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	x, err := xwin.Dial(srv.Display)
	if err != nil {
		return res, err
	}
	defer x.Close()
	res.calib = calibrate(c.warm) // a benchmark's pause, not synchronisation: the agents get going
	app0, x0 := threadsUse(cmd.Process.Pid), threadsUse(srv.Pid)
	sent, server, err := typeKeys(x, c.keys, c.pace)
	if err != nil {
		return res, err
	}
	time.Sleep(time.Second) // the last key's frame
	res.app, res.x = threadsUse(cmd.Process.Pid).minus(app0), threadsUse(srv.Pid).minus(x0)
	w, err := x.Find("offmain gui")
	if err != nil {
		return res, err
	}
	if err := x.CloseWindow(w); err != nil {
		return res, err
	}
	if err := cmd.Wait(); err != nil {
		return res, fmt.Errorf("app: %w\n%s", err, log)
	}
	<-log.done
	rows, err := readProbe(probe)
	if err != nil {
		return res, err
	}
	res.samples = joinKeys(rows, sent, server)
	if len(sent) > 0 {
		res.frames, err = readFrames(framesPath(probe), sent[0], sent[len(sent)-1]+int64(c.pace))
		if err != nil {
			return res, err
		}
	}
	res.flush = lastLine(log.String(), "flush:")
	return res, nil
}

// frame is one frame the app drew: from the event that delivered it to
// FrameEvent.Frame's return, in Unix ns, and how many text changes it showed.
type frame struct {
	start, end int64
	changes    int
}

// framesPath is where the app's probe at path writes its frames (the gui
// example's probe.go).
func framesPath(path string) string {
	return strings.TrimSuffix(path, ".csv") + "-frames.csv"
}

// readFrames reads the frames that began in [from, to).
func readFrames(path string, from, to int64) ([]frame, error) {
	recs, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	var out []frame
	for _, r := range recs { // start_ns,end_ns,changes
		var fr frame
		fr.start, _ = strconv.ParseInt(r[0], 10, 64)
		fr.end, _ = strconv.ParseInt(r[1], 10, 64)
		fr.changes, _ = strconv.Atoi(r[2])
		if fr.start >= from && fr.start < to {
			out = append(out, fr)
		}
	}
	return out, nil
}

// typeKeys sends keys a..z in turn, pace apart, and returns when each was
// sent and when the server had taken it.
func typeKeys(x *xwin.Conn, keys int, pace time.Duration) (sent, server []int64, err error) {
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for i := range keys {
		<-tick.C
		sym := 'a' + rune(i%26)
		t0 := time.Now()
		if err := x.Key(xwinKeysym(sym)); err != nil {
			return nil, nil, err
		}
		sent, server = append(sent, t0.UnixNano()), append(server, time.Now().UnixNano())
	}
	return sent, server, nil
}

// joinKeys joins the keys sent with the probe's changes: key i (0-based)
// is shown by the first change that made the text i+1 bytes long or longer.
// Keys that came faster than frames share one change (the text grew by
// two in one frame); dropping them would drop the slowest keys. A key with
// no change at or beyond its length (the app missed it) is left out.
func joinKeys(rows map[int]sample, sent, server []int64) []sample {
	var out []sample
	for i := range sent {
		n := i + 1
		for ; n <= len(sent); n++ {
			if _, ok := rows[n]; ok {
				break
			}
		}
		r, ok := rows[n]
		if !ok {
			continue
		}
		r.sent, r.server = sent[i], server[i]
		out = append(out, r)
	}
	return out
}

// readProbe reads the probe's CSV into samples by the text's length.
func readProbe(path string) (map[int]sample, error) {
	recs, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	out := map[int]sample{}
	for _, r := range recs { // seq,chat,len,event_ns,handler_ns,save_ns,frame_ns
		n, _ := strconv.Atoi(r[2])
		var v [4]int64
		for j := range v {
			v[j], _ = strconv.ParseInt(r[3+j], 10, 64)
		}
		if _, dup := out[n]; !dup {
			out[n] = sample{event: v[0], handler: v[1], save: v[2], frame: v[3]}
		}
	}
	return out, nil
}

// readCSV returns the records of the CSV file at path after its header.
func readCSV(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no header", path)
	}
	return recs[1:], nil
}
