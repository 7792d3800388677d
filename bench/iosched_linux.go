package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// The I/O scheduler decides what the tiers' I/O priority buys: mq-deadline
// honours the class only, BFQ class and level, none and kyber neither
// (block/mq-deadline.c, block/bfq-iosched.c). -iosched runs the whole bench
// under each named scheduler of the disk that holds the scratch folder, one
// table each, switching it through sysfs (Documentation/block/
// switching-sched.rst: echo NAME > /sys/block/DEV/queue/scheduler), which
// needs root, and restores the previous one on every way out but SIGKILL.

// schedFile is a disk's queue/scheduler: its path, active and offered
// schedulers.
type schedFile struct {
	path, active string
	offered      []string
}

// schedulerOf finds the queue/scheduler of the disk holding dir (for a
// partition, its parent device's).
func schedulerOf(dir string) (schedFile, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return schedFile{}, err
	}
	maj, mnr := unix.Major(st.Dev), unix.Minor(st.Dev)
	if maj == 0 {
		return schedFile{}, fmt.Errorf("%s is on a filesystem without a block device (%d:%d)", dir, maj, mnr)
	}
	dev, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", maj, mnr))
	if err != nil {
		return schedFile{}, err
	}
	for _, d := range []string{dev, filepath.Dir(dev)} {
		p := filepath.Join(d, "queue", "scheduler")
		if b, err := os.ReadFile(p); err == nil {
			return parseSchedFile(p, string(b)), nil
		}
	}
	return schedFile{}, fmt.Errorf("no queue/scheduler for %s", dev)
}

// parseSchedFile reads a queue/scheduler line such as
// "none [mq-deadline] kyber bfq".
func parseSchedFile(path, line string) schedFile {
	s := schedFile{path: path}
	for _, f := range strings.Fields(line) {
		name := strings.Trim(f, "[]")
		if name != f {
			s.active = name
		}
		s.offered = append(s.offered, name)
	}
	if s.active == "" && len(s.offered) == 1 {
		s.active = s.offered[0] // a queue with one choice prints it without brackets
	}
	return s
}

// disk names the device of a queue/scheduler path: /sys/block/vda/queue/scheduler -> vda.
func (s schedFile) disk() string { return filepath.Base(filepath.Dir(filepath.Dir(s.path))) }

// pick resolves the -iosched names against what the disk offers.
func (s schedFile) pick(names []string) ([]string, error) {
	if len(names) == 1 && names[0] == "all" {
		return s.offered, nil
	}
	for _, n := range names {
		if !slices.Contains(s.offered, n) {
			return nil, fmt.Errorf("%w: -iosched: %s offers %s, not %q", errUsage, s.disk(), strings.Join(s.offered, ", "), n)
		}
	}
	return names, nil
}

// runSchedulers runs the bench once under each scheduler of cfg.iosched.
// Without root it says why it cannot switch and runs once as things are.
func runSchedulers(ctx context.Context, cfg *config, exe string, stdout, stderr io.Writer) (err error) {
	s, err := schedulerOf(scratchParent(cfg))
	if err != nil {
		return fmt.Errorf("-iosched: %w", err)
	}
	names, err := s.pick(cfg.iosched)
	if err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		fmt.Fprintf(stderr, "bench: -iosched: writing %s needs root; running on the current scheduler, %s\n", s.path, s.active)
		return runBench(ctx, cfg, exe, stdout, stderr)
	}
	fmt.Fprintf(stderr, "bench: switching %s's I/O scheduler (now %s); if this run is killed, restore it with: echo %s > /sys/block/%s/queue/scheduler\n",
		s.disk(), s.active, s.active, s.disk())
	defer func() {
		if rerr := writeSched(s.path, s.active); rerr != nil {
			err = errors.Join(err, fmt.Errorf("restoring the I/O scheduler %s (do it by hand: echo %s > %s): %w", s.active, s.active, s.path, rerr))
		}
	}()
	for _, name := range names {
		if err := writeSched(s.path, name); err != nil {
			return fmt.Errorf("switching %s to %s: %w", s.disk(), name, err)
		}
		c := *cfg
		c.jsonPath, c.svgPath = perScheduler(cfg.jsonPath, name, len(names)), perScheduler(cfg.svgPath, name, len(names))
		fmt.Fprintf(stdout, "\n# I/O scheduler: %s (%s)\n\n", name, s.disk())
		if err := runBench(ctx, &c, exe, stdout, stderr); err != nil {
			return err
		}
	}
	return nil
}

func writeSched(path, name string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(name)
	return errors.Join(err, f.Close())
}

// perScheduler names an output file after the scheduler when a run makes
// more than one: out.json -> out.bfq.json.
func perScheduler(path, name string, runs int) string {
	if path == "" || runs == 1 {
		return path
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "." + name + ext
}

// activeName is the scheduler's name in an envInfo.IOScheduler line,
// "mq-deadline (vda)" -> "mq-deadline".
func activeName(line string) string {
	name, _, _ := strings.Cut(line, " ")
	return strings.TrimSuffix(name, ":")
}
