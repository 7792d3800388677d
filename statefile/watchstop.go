package statefile

import "context"

// stop ends the watch: after it returns, fn is not running and is never
// called again. A second call does nothing.
func (r *watchReg) stop() { r.stopContext(context.Background()) }

// stopContext ends the watch like stop, but waits for fn's return and the
// loop's end only until ctx ends, and then reports false. fn is never
// called again either way.
func (r *watchReg) stopContext(ctx context.Context) bool {
	r.once.Do(func() {
		s := r.q.s
		s.watchMu.Lock()
		ended := s.dropLocked(r)
		s.watchMu.Unlock()
		if ended != nil {
			r.ends = append(r.ends, ended)
		}
		r.ends = append(r.ends, r.sub.stop())
	})
	for _, ch := range r.ends {
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// stopWatches stops every live watch of s (Store.Close), waiting for the
// fns and the loop until ctx ends; the paths of the watches it could not
// wait for go to nd as pending.
func (s *Store) stopWatches(ctx context.Context, nd *NotDrainedError) {
	s.watchMu.Lock()
	var regs []*watchReg
	if dw := s.watcher; dw != nil {
		dw.mu.Lock()
		for r := range dw.regs {
			regs = append(regs, r)
		}
		dw.mu.Unlock()
	}
	s.watchMu.Unlock()
	for _, r := range regs {
		if !r.stopContext(ctx) {
			nd.addPending(r.q.path, ctx.Err())
		}
	}
}
