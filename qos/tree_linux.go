//go:build linux

package qos

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// signalTree sends sig to every process of tree, read from procs: to a
// whole process group at once (kill(2) with -pgid) where every process of
// the group is in the tree, so that a child the group forks meanwhile gets
// it too (kernel/fork.c, copy_process: a fork and a group's signal are
// ordered), and to each other process through its pidfd. A group is
// signalled while its leader, whose pid is its id, is seen running, or
// while other members hold the id. It returns the processes it signalled,
// and those it may not signal (EPERM: a process that changed its real and
// saved user ids, as sudo does, is no longer its parent's user's to
// signal; kill(2)). Each process's permission is checked first (signal 0
// through its pidfd), since kill(2) of a group succeeds if it reached any
// member; a group with a member that refuses is signalled one by one.
func signalTree(tree, procs []proc, sig unix.Signal, send signaller) (sent, refused []proc) {
	whole, denied := wholeGroups(tree, procs, send)
	for _, p := range tree {
		if denied[p.pid] {
			refused = append(refused, p)
		}
	}
	leader := make(map[int]proc, len(tree))
	for _, p := range tree {
		if p.pid == p.pgid {
			leader[p.pgid] = p
		}
	}
	sentGroup := map[int]bool{}
	for pgid, ok := range whole {
		l, seen := leader[pgid]
		if ok && (!seen || signalProc(l, 0, send) == nil) && unix.Kill(-pgid, sig) == nil {
			sentGroup[pgid] = true
		}
	}
	for _, p := range tree {
		switch {
		case denied[p.pid]:
		case sentGroup[p.pgid]:
			sent = append(sent, p)
		default:
			switch err := signalProc(p, sig, send); {
			case errors.Is(err, unix.EPERM):
				refused = append(refused, p)
			case err == nil:
				sent = append(sent, p)
			}
		}
	}
	return sent, refused
}

// wholeGroups returns, for each process group of tree, whether all of it is
// in tree and may be signalled at once, and the processes of tree that
// refuse a signal (signal 0, EPERM).
func wholeGroups(tree, procs []proc, send signaller) (whole, denied map[int]bool) {
	in := make(map[int]bool, len(tree))
	whole, denied = map[int]bool{}, map[int]bool{}
	for _, p := range tree {
		in[p.pid] = true
		whole[p.pgid] = true
	}
	for _, p := range procs {
		if whole[p.pgid] && !in[p.pid] && p.live() {
			whole[p.pgid] = false // the group reaches beyond the tree (the app's own, say)
		}
	}
	for _, p := range tree {
		if errors.Is(signalProc(p, 0, send), unix.EPERM) {
			denied[p.pid], whole[p.pgid] = true, false
		}
	}
	return whole, denied
}

// errGone is signalProc's error when the process exited (its pid may even
// name another process by now).
var errGone = errors.New("qos: the process is gone")

// signalProc sends sig to p, through send (nil: sendSignal), if the process
// with p's pid is still p (same start time). The pidfd pins the process between that check and the
// signal, so a pid freed and reused meanwhile is never signalled
// (pidfd_open(2), pidfd_send_signal(2)). It returns errGone if p is no
// longer there, and the signal's error if any (EPERM: p is not this
// process's to signal).
func signalProc(p proc, sig unix.Signal, send signaller) error {
	if send == nil {
		send = sendSignal
	}
	fd := openPidfd(p.pid)
	if fd.fd < 0 {
		return errGone
	}
	defer fd.close()
	now, ok := readProc(p.pid)
	if !ok || now.start != p.start {
		return errGone
	}
	if err := send(fd, p, sig); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return errGone
		}
		return err
	}
	return nil
}

// A signaller sends sig through fd, the pidfd of p: sendSignal, or in a
// test one that refuses a process as the kernel would one of another
// user's.
type signaller func(fd pidfd, p proc, sig unix.Signal) error

func sendSignal(fd pidfd, _ proc, sig unix.Signal) error { return fd.signal(sig) }

// killTree sends SIGKILL to every process below root until none is left
// alive but those it may not signal (EPERM, see signalTree), and returns
// those it sent it to and those it may not signal. A process with SIGKILL
// pending cannot fork any more (kernel/fork.c, copy_process: a fatal
// signal pending fails the fork), so each round leaves fewer to find; a
// child made just before shows in the next round. A process that refuses
// the signal is not waited for (it may run for good); its children are
// still killed when they can be. The caller reaps what were its children.
func killTree(root int, reap func(), send signaller) (killed, refused []proc, err error) {
	sent := map[int]uint64{}
	denied := map[int]uint64{}
	for round := 0; ; round++ {
		tree, err := treeOf(root)
		if err != nil {
			return killed, refused, err
		}
		fresh, left := 0, 0
		for _, p := range tree {
			if denied[p.pid] == p.start {
				continue // not ours to kill
			}
			left++
			if sent[p.pid] == p.start {
				continue // dying: SIGKILL is pending
			}
			switch err := signalProc(p, unix.SIGKILL, send); {
			case err == nil:
				sent[p.pid] = p.start
				killed = append(killed, p)
				fresh++
			case errors.Is(err, unix.EPERM):
				denied[p.pid] = p.start
				refused = append(refused, p)
				left--
			}
		}
		if reap != nil {
			reap()
		}
		if left == 0 {
			return killed, refused, nil
		}
		if fresh == 0 {
			pause(round)
		}
	}
}

// pause waits a little between rounds that found only dying processes,
// longer as rounds go by (a hundredth of a second at most): a SIGKILLed
// process takes a few microseconds to become a zombie, longer under load.
func pause(round int) {
	time.Sleep(time.Duration(min(round+1, 10)) * time.Millisecond)
}
