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
//   - [Agent]: agent hosts are started with [Start]; they and all they start
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
// In mode background the child is forked from a thread at nice 19 and I/O
// idle, then moved to SCHED_IDLE at once: a SCHED_IDLE thread that forks can
// wait for seconds under load (9-35 s with 48 busy loops, measured on a
// 2-core VM). Threads the child makes in between stay at nice 19. Start
// waits for exec in every mode, and under load that takes milliseconds to a
// tenth of a second (more in mode background, where the child execs at I/O
// class idle), so call it off the UI goroutine. BenchmarkStartUnderLoad and
// BenchmarkStartUnderDiskLoad measure it; bench/README.md in the repository
// has their figures.
//
// Autogroup: with /proc/sys/kernel/sched_autogroup_enabled at 1, a child in
// a new session (SysProcAttr.Setsid, as every PTY child) gets an autogroup
// of its own, and its nice value then weighs only against its own group, not
// against the GUI. Start therefore writes the tier's nice value to
// /proc/<pid>/autogroup for such children, after they start. A process that
// calls setsid itself later (a terminal multiplexer, a daemonizing tool)
// escapes this; the cgroup lever in [Options] does not have that hole. An
// app that no setsid ever moved (under init, many CI runners and containers)
// is in the kernel's default autogroup ([RootAutogroup]), which takes no
// nice value; its Setsid children are fixed the same way.
//
// # What a normal user gets
//
// A desktop app runs as a normal user, for whom the kernel keeps limits it
// waives for root. Every step Start and Do take, on Linux:
//
//	step                          when          needs                          refused
//	nice +15/+19 (setpriority)    before exec   nothing: raising nice is free  never
//	I/O best-effort 7 or idle     before exec   nothing (ioprio_set(2))        never
//	SCHED_IDLE, own thread (Do)   on the thread nothing (sched(7))              never
//	SCHED_IDLE, child (Start)     after exec    same user as the child         OnError; child stays nice 19, I/O idle
//	autogroup nice (Setsid)       after exec    same user; 1 write/100 ms,     paced; OnError if refused for 10 s
//	                                            system-wide, without
//	                                            CAP_SYS_ADMIN
//	cgroup leaf and knob          before fork   a delegated cgroup v2 subtree   Start returns an error, starts nothing
//	raise a thread's nice back    never done    RLIMIT_NICE (usually 0)         the lowered thread is retired instead
//	leave SCHED_IDLE              never done    RLIMIT_NICE                     the lowered thread is retired instead
//
// Steps before exec are taken on the forking thread, so the child starts
// lowered; nothing there needs privilege. The two steps after exec are
// queued on one goroutine for the whole process, which exists only while it
// has work: it moves children to SCHED_IDLE at once, and spaces autogroup
// writes 100 ms apart once the kernel has refused one
// (kernel/sched/autogroup.c, proc_sched_autogroup_set_nice: EAGAIN within
// HZ/10 of the last write by anyone). So the n-th of a burst of Setsid
// starts is corrected about n x 100 ms after it started: for 20 children
// started at once as user nobody, the autogroups reached the tier's nice after 0.1 to
// 2.0 s (TestAutogroupRateLimit, on this project's 2-core VM and in the CI
// VM). Until then such a child competes with the GUI as one group at nice 0.
// A child that exits first needs nothing (told by a pidfd, pidfd_open(2),
// not guessed from an errno: a dead child's /proc files are root's). Start
// never waits for these steps and never fails or kills a child because of
// them; a failure goes to [Options.OnError] and [Options.Logger] and shows
// in [Inspect] ([Applied.Failed]), a step not yet taken in [Applied.Pending].
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
// Agents and the app: a [Group] starts the app's agents and stops them at
// quit (flush.Func(group.Stop) in the quit hook: SIGTERM to each agent's
// process group, SIGKILL after a second). For a crash or a SIGKILL, which
// leave no quit path, it sets SysProcAttr.Pdeathsig to SIGKILL. The kernel
// sends that signal when the thread that forked the child exits (prctl(2)
// PR_SET_PDEATHSIG; kernel/exit.c, forget_original_parent), so Start forks
// such commands from a thread lowered to the tier and kept while any child
// it forked runs, not from a thread it retires; the thread only forks, so
// its priority slows nothing else. It is woken at the tier's priority, and
// starts its commands one at a time, which made Start slower than from a
// fresh thread beside busy loops (BenchmarkStartPdeathsig; figures in
// bench/README.md), so commands without Pdeathsig keep the fresh thread. Ptrace, tied to the forking thread too, is refused with
// [ErrThreadBound].
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
