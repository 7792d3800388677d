package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/offmain/offmain/examples/gui/internal/xwin"
)

// sample is one key: when typebench sent it and when the app saw it pass
// each hop, in Unix nanoseconds.
type sample struct {
	sent, server                int64 // before the XTEST request; after the server answered the round trip behind it
	event, handler, save, frame int64 // from the app's probe
}

type result struct {
	arm     arm
	samples []sample
	flush   string // the app's flush report
}

// runArm runs one arm and returns its samples.
func runArm(bin, dir string, a arm, keys int, pace, warm time.Duration) (result, error) {
	res := result{arm: a}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return res, err
	}
	display, stopX, err := startX()
	if err != nil {
		return res, err
	}
	defer stopX()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	probe := filepath.Join(dir, "keys.csv")
	cmd, log, err := startApp(ctx, bin, dir, display, probe, a)
	if err != nil {
		return res, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	x, err := xwin.Dial(display)
	if err != nil {
		return res, err
	}
	defer x.Close()
	time.Sleep(warm) // a benchmark's pause, not synchronisation: the agents get going
	sent, server, err := typeKeys(x, keys, pace)
	if err != nil {
		return res, err
	}
	time.Sleep(time.Second) // the last key's frame
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
	for i := range sent {
		r, ok := rows[i+1] // the change that made the text i+1 bytes long
		if !ok {
			continue
		}
		r.sent, r.server = sent[i], server[i]
		res.samples = append(res.samples, r)
	}
	res.flush = lastLine(log.String(), "flush:")
	return res, nil
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

// readProbe reads the probe's CSV into samples by the text's length.
func readProbe(path string) (map[int]sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	out := map[int]sample{}
	for _, r := range recs[1:] { // seq,chat,len,event_ns,handler_ns,save_ns,frame_ns
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
