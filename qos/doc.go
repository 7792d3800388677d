// Package qos keeps agents, and everything they start, off the cores and the
// disk the person at the screen is waiting on.
//
// A desktop app that runs coding agents competes with them, and with the
// shells, git, rg and compilers they start, for CPU and disk. Raising the GUI
// is not the lever; demoting what the agents start is (measured on real machines: with 14 busy
// processes at default priority a dragged page trailed by 55 ms at p95, with
// the load demoted by 6 ms). This package declares one policy, printed by
// [Describe], and applies it where each process starts, so every child and
// grandchild inherits it:
//
//   - [Serving]: the daemon the GUI waits on calls [EnterServing] once; its
//     disk I/O yields, its CPU priority stays.
//   - [Agent]: agent hosts are started with [Start], or a [Group], which also
//     ends everything they start with the app; they and all they start
//     run at nice +15 and I/O best-effort 7 (mode utility) or SCHED_IDLE and
//     I/O idle (mode background).
//   - [Background]: a housekeeping pass runs through [Do] on one lowered
//     thread.
//
// The mode comes from OFFMAIN_QOS (utility, background or off; [ModeFromEnv],
// [Resolve]) and is forwarded to children with [Env]. Mode off applies
// nothing.
//
// # Linux
//
// Nice values and I/O priorities belong to threads, and a child copies them
// from the thread that clones it. [Start] therefore runs cmd.Start on a fresh
// goroutine locked to its own OS thread, lowers that thread, starts the
// command and lets the goroutine end still locked, so the Go runtime
// terminates the thread: lowering a nice value is one-way without privilege,
// and no thread the application keeps is ever lowered. The main thread, which
// the runtime parks instead of terminating, is never the one lowered. Setting
// priorities after cmd.Start instead would race with the threads and children
// the command makes at once. [Do] runs fn the same way.
//
// In mode background the child must be at SCHED_IDLE from its first
// instruction: what a process forks copies its policy for good (sched(7)),
// and an agent's shell forks its workload at once. A thread that forks at
// SCHED_IDLE, though, can wait for seconds under load (9-35 s with 48 busy
// loops, measured on a 2-core VM), and the fork and the exec are Start's
// wait. So Start forks from a thread at nice 19 and I/O idle with
// SysProcAttr.Ptrace set: the child calls PTRACE_TRACEME just before
// execve, a successful execve stops it with SIGTRAP before the new program
// runs anything (ptrace(2)), and the forking thread, its tracer, moves its
// one thread to SCHED_IDLE and detaches. That needs a child no signal can
// reach between the two calls (the tracer is still inside cmd.Start then,
// which waits for the exec): one in a process group of its own
// (SysProcAttr.Setpgid or Setsid, without Setctty or Foreground), as a
// [Group] gives every command, that is not setuid, in a process where
// ptrace is allowed (not under Yama's ptrace_scope 3, a seccomp filter that
// refuses it, or a debugger). Any other child is forked from a thread at
// SCHED_IDLE. Start waits for exec in every mode, and under load that takes
// milliseconds to seconds, so call it off the UI goroutine: see "What Start
// costs" below.
//
// Autogroup: with /proc/sys/kernel/sched_autogroup_enabled at 1, a child in
// a new session (SysProcAttr.Setsid, as every PTY child) gets an autogroup
// of its own, and its nice value then weighs only against its own group, not
// against the GUI. Start therefore writes the tier's nice value to
// /proc/<pid>/autogroup for such children: while a traced child waits at
// its exec, else (and when the kernel's rate limit refuses that write) once
// it runs, through the child or, once a daemonizing child has left, any
// member of its session still running. A [Group] command held through
// [Main] with Setsid starts only once its session's autogroup is at the
// tier: the holder waits out the rate limit below (up to 5 s) before it
// forks the command. A process of a held tree that calls setsid itself
// later (a terminal multiplexer, a daemonizing dev server, setsid(1)) gets
// an autogroup at nice 0 from the kernel, and no step at fork or exec can
// prevent it (a normal user is told of no setsid: the proc connector needs
// CAP_NET_ADMIN), so the holder reads its tree every 200 ms and writes the
// tier's nice value to every autogroup in it that is neither the app's nor
// at the tier already: such a session runs at nice 0 for up to 200 ms, and
// for about 100 ms more per other session made at once by a normal user
// (for ten made at once as user nobody, 0.1 to 1.0 s:
// TestDescendantSessionGetsTier). Each look costs the holder under a
// millisecond for a tree of ten processes. Outside a held Group nothing
// watches, and [Inspect] of an agent names such a session; the cgroup
// lever in [Options] has neither delay. An app that no setsid ever moved
// (under init, many CI runners and containers) is in the kernel's default
// autogroup ([RootAutogroup]), which takes no nice value; its Setsid
// children are fixed the same way.
//
// # What a normal user gets
//
// A desktop app runs as a normal user, for whom the kernel keeps limits it
// waives for root. Every step Start and Do take, on Linux:
//
//	step                          when            needs                          refused
//	nice +15/+19 (setpriority)    before exec     nothing: raising nice is free  never
//	I/O best-effort 7 or idle     before exec     nothing (ioprio_set(2))        never
//	SCHED_IDLE, own thread (Do)   on the thread   nothing (sched(7))             never
//	SCHED_IDLE, child (Start)     at exec         PTRACE_TRACEME (ptrace(2))     forked from a SCHED_IDLE thread instead
//	autogroup nice (Setsid)       at exec, else   same user; 1 write/100 ms,     paced; OnError if refused for 10 s
//	                              after exec      system-wide, without
//	                                              CAP_SYS_ADMIN
//	cgroup leaf and knob          before fork     a delegated cgroup v2 subtree  Start returns an error, starts nothing
//	child subreaper (Group)       in the holder   nothing (prctl(2))             never
//	cgroup.kill (Group, Cgroup)   Stop, app dies  Linux 5.14 and the subtree     processes killed one by one instead
//	raise a thread's nice back    never done      RLIMIT_NICE (usually 0)        the lowered thread is retired instead
//	leave SCHED_IDLE              never done      RLIMIT_NICE                    the lowered thread is retired instead
//
// Steps before exec are taken on the forking thread, so the child starts
// lowered; nothing there needs privilege. A step at exec is taken while the
// child waits there, before it runs. An autogroup write the exec could not
// take (a child not traced, or the kernel's rate limit) is queued on one
// goroutine for the whole process, which exists only while it has work and
// spaces autogroup writes 100 ms apart once the kernel has refused one
// (kernel/sched/autogroup.c, proc_sched_autogroup_set_nice: EAGAIN within
// HZ/10 of the last write by anyone). So the n-th of a burst of Setsid
// starts is corrected about n x 100 ms after it started: for 20 children
// started at once as user nobody, the autogroups reached the tier's nice
// after 0.1 to 2.0 s (TestAutogroupRateLimit, on this project's 2-core VM
// and in the CI VM). Until then such a child competes with the GUI as one
// group at nice 0. A session with no member left needs nothing (told by a
// pidfd, pidfd_open(2), and /proc, not guessed from an errno: a dead
// child's /proc files are root's). Start never waits for these steps and
// never fails or kills a child because of them; a failure goes to
// [Options.OnError] and [Options.Logger] and shows in [Inspect]
// ([Applied.Failed]), a step not yet taken in [Applied.Pending].
//
// The cgroup lever needs a cgroup v2 subtree delegated to the user, with the
// cpu controller. On a systemd desktop an app gets one by running in a
// delegated unit: systemd-run --user --scope -p Delegate=yes APP (or
// Delegate=yes in its service unit). The app's own process then sits in that
// cgroup, and a cgroup with processes cannot give child cgroups the cpu
// controller and processes at once (cgroup-v2.rst, "No Internal Process
// Constraint" and "Threads"), so the app first moves itself into a leaf with
// [JoinLeaf](dir, "app") and then passes dir, read from /proc/self/cgroup,
// as [Options.Cgroup]. Start says which of these is missing when it is.
//
// I/O scheduler: mq-deadline honours the I/O class only (best-effort 7 acts
// as best-effort 4, idle is honoured), BFQ honours class and level, none and
// kyber ignore I/O priority. [Inspect] reports each disk's scheduler. What
// that bought in one bench run on a 2-core VM (`go run ./bench -iosched
// mq-deadline,bfq`): on mq-deadline, mode background's idle class cut a GUI
// thread's 4 KiB read p99 by 25 % [6, 45] beside agent disk load, and the
// Agent tier's best-effort 7 changed nothing measurable; on BFQ the
// untiered load was worse for the GUI's reads and fsyncs than on
// mq-deadline, and the tiers' reductions there (read p99 -26 %, fsync p99
// -41 %) fell within intervals that include no change. The CPU half of the
// tiers is what the bench shows reliably.
//
// What a tier cannot take away: since Linux 6.6 the fair scheduler (EEVDF)
// picks only among tasks whose lag is not negative, and keeps up to
// max(2 x slice, one tick) of lag for any task, whatever its weight
// (entity_lag in kernel/sched/fair.c). An agent kept waiting, even at
// SCHED_IDLE, is owed up to a tick (4 ms at HZ 250) and gets it ahead of a
// nice-0 thread that has just run past its share; a woken thread also waits
// for an agent inside a system call (an ext4 write, a truncate) to reach a
// preemption point. Measured with a desktop window (examples/gui, typebench):
// beside busy agents in mode background a nice-0 thread's 1 ms sleep woke
// late by about 3 ms at p99 against 1 ms beside quiet ones, and a key's way
// to the presented frame kept +6 ms [+1.2, +15] at p95 over its baseline
// (+42 ms with saves on the UI goroutine). Only CPUs the agents cannot use
// (an affinity or cpuset the app sets) take that away; qos does not set one.
//
// # Agents and the app
//
// A [Group] starts the app's agents and ends them, and every process they
// start, with the app: at an orderly quit through [Group.Stop] in the quit
// hook (flush.Func(group.Stop)), and when the app dies without one (a
// crash, a panic, a crash in C code, SIGKILL). An agent host is never one
// process: it runs shells, git, compilers, test runners and dev servers,
// some in process groups of their own, some daemonized (setsid and a double
// fork). What the kernel offers a normal user to hold such a tree:
//
//   - A parent-death signal (prctl(2) PR_SET_PDEATHSIG) reaches the direct
//     child only; a daemon's parent exits at once.
//   - Process groups and sessions are left with one setsid(2).
//   - A PID namespace in an unprivileged user namespace dies with its init
//     (bubblewrap's --die-with-parent relies on it), but the agent then
//     runs as pid 1 or 2 with pids that differ from the ones /proc shows it
//     (an agent's kill $(pgrep -f server) misses), sees other users' files
//     as nobody's and runs no setuid program (sudo); Ubuntu restricts
//     unprivileged user namespaces (AppArmor, since 23.10).
//   - A cgroup holds a tree whatever it does, and cgroup.kill (Linux 5.14)
//     ends it at once, but a normal user has one only in a delegated
//     subtree: the cgroup lever, [Options.Cgroup].
//   - A child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER; kernel/exit.c,
//     find_new_reaper) gets every orphan of its descendants, whatever
//     group or session it is in, and needs nothing.
//
// So on Linux, in an app whose main calls [Main] first, Group.Start runs
// each command under two helpers, both this binary run again from
// /proc/self/exe. The keeper, forked with the command's SysProcAttr (its
// session, terminal and process group), is cmd.Process; its child, the
// holder, a child subreaper in a process group of its own, starts the
// command as [Options.Start] would, in a process group of its own in the
// keeper's session (given the terminal's foreground if the keeper has a
// terminal), with a parent-death signal from the holder. Whatever the
// command starts stays below the holder. The holder kills that whole tree,
// each process until none is left (a process with SIGKILL pending forks no
// more: kernel/fork.c, copy_process), as soon as the app is gone, which it
// reads as EOF on a socket only the app held (a process's descriptors close
// however it ends), or the keeper is (cmd.Process.Kill,
// exec.CommandContext's cancel, SIGKILL to the command's group).
// Otherwise it exits, as the command did, once the command and everything
// it started have exited: cmd.Wait returns then, with the command's exit
// status or signal. The keeper relays every signal it gets to the holder,
// which relays it to the command's process group, so a signal to
// cmd.Process, or to its process group (whose id is cmd.Process.Pid),
// reaches the command once. SIGSTOP cannot be relayed and stops the keeper
// alone: pause an agent with SIGTSTP. [Inspect] of cmd.Process reads the
// command and its tree, without the helpers. With [Options.Cgroup] each
// command runs in a cgroup of its own below the tier's leaf, which Stop
// and the holder kill through cgroup.kill first and the holder removes.
// The two helpers run at the app's priority, since they wait and must act
// at once; they hold none of the command's pipes or its terminal.
//
// [Group.Stop] sends SIGTERM to every process of each tree at once (a
// whole process group through kill(2) where the group is all in the tree,
// so that a concurrent fork gets it too), waits [Group.KillAfter], then
// sends SIGKILL to what is left until nothing is, and names what it had to
// kill in an error wrapping [ErrKilled]. Group.Start gives each command a
// process group of its own unless SysProcAttr sets Setsid, Setpgid or
// Foreground.
//
// Measured on this project's 2-core VM, shared with other jobs (load
// average 12 to 16): every process of a tree with a background job, a
// child in its own process group and a double-forked daemon was gone 4 to
// 107 ms (median 13 ms, 30 runs) after the app's SIGKILL, panic or crash in
// C code, and within 650 ms in 24 runs while a QEMU VM also ran on those 2
// cores (TestTreeDiesWithApp); after Stop, nothing was left when it
// returned (TestGroupStopTree). Each helper holds about 1.3 MB of
// private memory while its command runs (8.5 MB resident, the rest the
// binary's pages, shared with the app; this package's 8.8 MB test binary),
// and the two add two execs of the app's binary to each Group.Start (see
// "What Start costs").
//
// What an app must do: call [Main] first thing in main (package init
// functions run in the helpers too, so keep them free of side effects) and
// end its agents through the Group or cmd.Process. What is not held: a
// process meant to outlive the app must be started outside the tree
// (systemd-run --user, D-Bus activation; a browser that an agent's
// xdg-open starts for the first time ends with the app), and a SIGKILL to
// the holder itself releases the tree. Without Main, a Group uses no
// helper and logs so once: Stop reaches the command's process group and
// what it sees below the command while it runs, and the command alone gets
// SIGKILL as its parent-death signal when the app dies; what it started in
// other groups or sessions may outlive the app.
//
// # What Start costs
//
// Start waits until the command has exec'd (Group.Start: until the holder
// says it has), so call it off the UI goroutine. BenchmarkStartGroup starts
// /bin/true 40 times each way; the figures are the lowest and highest of
// three runs on this project's 2-core VM, which other jobs kept at a load
// average of 13 to 22 (no quieter machine was at hand), with and without 4
// more busy loops at nice 0 in the benchmark's session:
//
//	p50 / p95, ms                  utility                 background
//	Start, no process group        0.4-0.6 / 1.5-13        1.3-1.5 / 2.1-152     forked from a SCHED_IDLE thread
//	Start, Setpgid                 0.4-1.6 / 1.5-24        0.5-0.9 / 2.9-19      traced
//	Group, without Main            0.3-1.0 / 1.9-45        0.3-1.0 / 3.2-17
//	Group, with Main               13-16 / 47-510          16-17 / 60-202        two more execs
//	beside 4 busy loops:
//	Start, no process group        0.7-201 / 1984-4468     1.6-2.4 / 3019-5471
//	Start, Setpgid                 1.4-155 / 639-2307      0.5-80 / 412-1986
//	Group, without Main            1.1-2.0 / 575-641       1.7-211 / 923-3567
//	Group, with Main               331-859 / 876-2206      360-783 / 1414-4328
//
//	go test -run '^$' -bench StartGroup -benchtime 40x ./qos/
//
// Holding the tree costs a Group.Start about 15 ms on a machine that has
// CPU to spare, and a few hundred ms beside busy loops: the keeper and the
// holder each start a Go runtime at the app's priority. A background Start
// of a command in a process group of its own is as fast as a utility one;
// one without a group, forked from a SCHED_IDLE thread, waits seconds at
// p95 beside busy loops. Under disk load the child's exec reads its binary
// at the tier's I/O priority (BenchmarkStartUnderDiskLoad), and Pdeathsig
// commands wait for the kept thread (BenchmarkStartPdeathsig);
// bench/README.md in the repository has their figures.
//
// # macOS, Windows and others
//
// On macOS children run under /usr/sbin/taskpolicy and threads are lowered
// through libSystem (setiopolicy_np, pthread_set_qos_class_self_np,
// setpriority with PRIO_DARWIN_THREAD), without cgo. This code compiles in
// this repository's CI and its test binaries link, but no test runs on
// macOS.
//
// On Windows children get BELOW_NORMAL_PRIORITY_CLASS or
// IDLE_PRIORITY_CLASS through SysProcAttr.CreationFlags, and Do sets the
// thread to THREAD_PRIORITY_BELOW_NORMAL (Agent, utility) or
// THREAD_MODE_BACKGROUND_BEGIN (the other lowered tiers) and puts it back
// after. CI runs the Windows tests as Windows binaries under Wine 8: they
// check the creation flags Start passes (and that the caller's SysProcAttr
// is left alone), and that Do and its restore set and put back the thread
// priority. They cannot check the effect: Wine ignores priority classes
// given as creation flags (every child reads back NORMAL_PRIORITY_CLASS, with
// or without qos), maps thread priorities onto Linux scheduling in its own
// way, and refuses THREAD_MODE_BACKGROUND_BEGIN (ERROR_INVALID_PARAMETER), so the
// Background tier's Do and the child's class as read back are not tested
// there. That Windows applies what qos asks was not observed. Elsewhere Start and Do go
// ahead unchanged, or, with [Options.Strict], refuse with an error wrapping
// [errors.ErrUnsupported].
//
// A Group there, and what an app gets from it:
//
//   - macOS and other Unix systems: each command gets a process group of
//     its own, and Stop sends SIGTERM, then SIGKILL after KillAfter, to that
//     group. There is no child subreaper and no parent-death signal, so what
//     left the group, and every agent when the app dies without Stop, keeps
//     running: an app there must Stop its Group at quit, and cannot cover a
//     crash. Main does nothing. Compiled, not run, in CI.
//   - Windows: each command runs in a job object of its own with
//     JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, started suspended and resumed once
//     assigned, so that everything it starts is in the job; the job's only
//     handle is the app's, and when it closes, however the app ends, the
//     system terminates every process in it. Stop terminates the job at once
//     (Windows has no SIGTERM). Nested jobs need Windows 8. The app need do
//     nothing more. Compiled for windows/amd64 and arm64; not run on
//     Windows: its tests (group_windows_test.go) passed under Wine 8.0.
//
// # Stability
//
// The module is v0, so the API may still change; each change is listed in
// the repository's CHANGELOG.md. The policy table is the likeliest to
// change: the levels each tier and mode apply (nice values, I/O classes and
// levels, scheduling classes, the macOS and Windows settings) will follow
// what measurements show, and with them what [Describe] prints and [Inspect]
// reports. What no v0 or v1 release will change: mode off applies nothing,
// [Start] and [Do] never lower a thread the application keeps, and on Linux
// a tier only lowers, never raising a priority that is already lower.
package qos
