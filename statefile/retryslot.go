package statefile

// The typed half of retries (retry.go): what a path's writer keeps of an
// op that failed.

// settle ends an attempt on the writer: with keep, the op it ran (now of
// kind, with the writer's value and any changes not yet applied) is kept
// for its retry; otherwise the writer's value is dropped, so the collector
// has it.
func (s *slot[T]) settle(keep bool, kind opKind) {
	var zero T
	if keep {
		s.kept = kept[T]{has: true, kind: kind, v: s.taking, ups: s.takingUps}
	} else {
		s.kept = kept[T]{}
	}
	s.taking, s.takingUps = zero, nil
}

// takeKept hands the kept op to the writer for its retry and returns its
// kind.
func (s *slot[T]) takeKept() opKind {
	k := s.kept
	s.kept = kept[T]{}
	s.taking, s.takingUps = k.v, k.ups
	return k.kind
}

// mergeKept settles a kept op when a new op of kind was taken: a Save or
// Remove replaces whatever the failed op would have written, so it is
// dropped; an Update builds on the failed op's value, the newest the app
// queued, so the kept op runs first, its changes before the new ones. It
// returns the kind the writer runs.
func (s *slot[T]) mergeKept(kind opKind) opKind {
	k := s.kept
	s.kept = kept[T]{}
	if !k.has || kind != opUpdate {
		return kind
	}
	s.taking = k.v
	s.takingUps = k.ups.then(s.takingUps)
	return k.kind
}
