package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// scratch is the only folder the bench writes in. Its name holds a space,
// as do the names inside it, so paths with spaces are exercised.
type scratch struct {
	root    string
	appDir  string // the app's files: probes and saves
	loadDir string // the agents' files: tree, reader file, writer files
	tree    string
	reader  string
}

// newScratch creates the scratch folder under cfg.dir (default: the user's
// cache directory, which is on a real disk where /tmp may be tmpfs, else the
// temp dir) and the files the load reads.
func newScratch(cfg *config) (*scratch, error) {
	root, err := os.MkdirTemp(scratchParent(cfg), "offmain bench *")
	if err != nil {
		return nil, fmt.Errorf("scratch folder: %w", err)
	}
	s := &scratch{root: root, appDir: filepath.Join(root, "app state"), loadDir: filepath.Join(root, "agent load")}
	s.tree, s.reader = filepath.Join(s.loadDir, "tree"), filepath.Join(s.loadDir, "reader data.bin")
	if err := s.fill(cfg); err != nil {
		return s, errors.Join(fmt.Errorf("making the load's files in %s: %w", root, err), s.remove())
	}
	return s, nil
}

func (s *scratch) fill(cfg *config) error {
	for _, d := range []string{s.appDir, s.loadDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	if err := writeTree(s.tree, cfg.treeDirs, cfg.treeFiles); err != nil {
		return err
	}
	if err := writeRandomFile(s.reader, cfg.readerMiB<<20); err != nil {
		return err
	}
	return s.syncfs()
}

// writeTree makes dirs folders of files small files each, for the
// metadata storms.
func writeTree(root string, dirs, files int) error {
	line := []byte("package tree // a small file, as in a source tree\n")
	for d := range dirs {
		dir := filepath.Join(root, fmt.Sprintf("dir %03d", d))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		for f := range files {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file %03d.go", f)), line, 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

// writerPath is where writer i of the current arm writes.
func (s *scratch) writerPath(i int) string {
	return filepath.Join(s.loadDir, fmt.Sprintf("writer %d.bin", i))
}

// clearWriters removes the writers' files and flushes the filesystem, so one
// arm's dirty pages are not written back during the next arm (syncfs(2)).
func (s *scratch) clearWriters(n int) error {
	var errs []error
	for i := range n {
		if err := os.Remove(s.writerPath(i)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(append(errs, s.syncfs())...)
}

func (s *scratch) syncfs() error {
	f, err := os.Open(s.root)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", s.root, err)
	}
	return nil
}

// remove deletes the scratch folder and everything in it.
func (s *scratch) remove() error {
	if err := os.RemoveAll(s.root); err != nil {
		return fmt.Errorf("removing the scratch folder: %w", err)
	}
	return nil
}

// scratchParent is where the scratch folder goes: -dir, else the user cache
// dir (on disk where /tmp is tmpfs), else the temp dir.
func scratchParent(cfg *config) string {
	if cfg.dir != "" {
		return cfg.dir
	}
	if d, err := os.UserCacheDir(); err == nil {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return os.TempDir()
}
