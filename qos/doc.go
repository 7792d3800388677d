// Package qos keeps agents, and everything they start, off the cores and the
// disk the person at the screen is waiting on, and ends them with the app.
//
// A desktop app that runs coding agents competes with them, and with the
// shells, git, rg and compilers they start, for CPU and disk. Raising the GUI
// is not the lever; demoting what the agents start is. Priorities are
// inherited, so this package applies one declared policy, printed by
// [Describe], where each process or pass of work starts:
//
//   - [Serving]: the daemon the GUI waits on calls [EnterServing] once; its
//     disk I/O yields, its CPU priority stays.
//   - [Agent]: agent hosts start through a [Group], which also ends them, and
//     everything they start, with the app. They and all they start run at
//     nice +15 and I/O best-effort 7 (mode utility) or SCHED_IDLE and I/O
//     idle (mode background) on Linux.
//   - [Background]: a housekeeping pass runs through [Do] on one lowered
//     thread; a short command the app waits for itself can use [Start].
//
// The mode says how hard the tiers apply: utility, background or off. An app
// resolves it once per agent with [ResolveMode] from the places it reads
// (OFFMAIN_QOS in a profile's environment, in its own, its configuration)
// and passes it on to the agents in [EnvVar]. Mode off applies nothing.
//
// # What an app may rely on
//
//   - A tier only lowers: a process already below it on some axis (a nice
//     value, an I/O class, SCHED_IDLE) stays there. Mode off applies
//     nothing.
//   - No thread the app keeps is lowered. Nice values and I/O priorities
//     belong to threads, and a child copies them from the thread that forks
//     it (sched(7), ioprio_set(2)); Start and Do use a fresh OS thread that
//     the Go runtime retires afterwards (runtime.LockOSThread), since a
//     lowered nice value cannot be raised again without privilege.
//   - Start and Group.Start return an error only when the command did not
//     start, naming the command (or its directory), as exec.Cmd.Start does.
//     A step the kernel refuses after the command started (the rate limit
//     on autogroup writes) never fails or kills it: the step is retried, and
//     a failure goes to the Group's OnError and shows in [Inspect].
//   - In an app whose main calls [Main] first, on Linux, a Group's command
//     and its whole tree (background jobs, children in process groups or
//     sessions of their own, double-forked daemons) are killed within a
//     second of the app, however the app ends (exit, panic, crash in C
//     code, SIGKILL), and end at [Group.Stop]: SIGTERM to everything,
//     SIGKILL after [Group.KillAfter] to what is left, with an error
//     wrapping [ErrKilled] that names what was killed. On Windows a job object does the same.
//     On macOS and other Unix systems Stop reaches each command's process
//     group only, and nothing ends the agents of an app that dies.
//   - cmd.Wait of a Group's command returns when the command exits, with its
//     status, as for any exec.Cmd; what it left running stays held until it
//     ends, Stop, or the app's end.
//
// # Why a holder process
//
// An agent's tree leaves any process group or session it is put in (a
// setsid(2), a double fork), and the kernel's parent-death signal reaches a
// direct child only (prctl(2), PR_SET_PDEATHSIG). A child subreaper
// (PR_SET_CHILD_SUBREAPER; kernel/exit.c, find_new_reaper) gets every orphan
// below it, in any group or session, and needs no privilege, where a cgroup
// needs a delegated subtree and a PID namespace changes the pids the agent
// sees. So on Linux, with Main, Group.Start runs each command below a
// holder, a subreaper that is this binary run again: it kills the tree when
// it reads EOF on a socket only the app held, which the kernel closes
// however the app ends. cmd.Process is a second helper, the keeper, which
// stands for the command: it is forked with the command's SysProcAttr, a
// signal to it or to its process group reaches the command once, SIGKILL to
// it ends the tree (exec.CommandContext), and it exits as the command does.
// SIGSTOP stops the keeper alone; [Applied.Pid] is the command's own pid.
// The command's own SysProcAttr.Pdeathsig is sent to it when the app is
// gone, KillAfter before the tree is killed. The repository's DESIGN.md has
// the survey of kernel options, the flow of a Group.Start and what was
// tried; its bench/README.md has the figures.
//
// # What a normal user gets
//
// Desktop apps run unprivileged. Raising a nice value back needs
// RLIMIT_NICE, which desktop users seldom have: qos never does it. A child
// in a new session (SysProcAttr.Setsid, as every terminal) gets an autogroup
// of its own, which weighs against the GUI's whatever the nice values in it
// (sched(7), "The autogroup feature"); qos writes the tier's nice value to
// it, which a normal user may do once per tenth of a second for the whole
// system (kernel/sched/autogroup.c, proc_sched_autogroup_set_nice), so a
// burst of such starts is corrected one after another. A Group's holder
// also corrects the sessions the tree makes later, within a fifth of a
// second of their appearing. A Group's Cgroup, a cgroup v2 subtree delegated to the app, puts
// each command in a cgroup of its own whose weight no session escapes
// (see [JoinLeaf]).
//
// What the tiers' I/O class does depends on the disk's I/O scheduler: BFQ
// honours class and level, mq-deadline (the kernel's choice for a
// single-queue disk, block/elevator.c) the class only, none and kyber
// neither. On a disk without BFQ the class does not lower the agents' disk
// load, and it is what remains of a GUI's wait beside them (the
// repository's bench/README.md, "Where the remaining gap comes from").
// The kernel's cgroup v2 io controller acts on any scheduler: where it
// reaches a Group's Cgroup, each lowered tier's cgroup gets an io.max for
// each disk with a device, a quarter of what the kernel's I/O cost model
// says the disk can do: the model the root cgroup's io.cost.model holds
// for it (figures written for the disk, by systemd-iocost(1) from its
// hwdb or by an admin), else the defaults for its class
// (block/blk-iocost.c, autop[]); and
// the memory controller with it, without which writeback is not charged
// to the agents (cgroup-v2.rst, "Writeback"). The limit holds while the
// GUI is idle too: the agents' disk throughput is the price
// (bench/README.md, "The I/O lever"). If it cannot be set, the command
// starts without it and the error goes to the Group's OnError, once for
// each run of the same failure: it is the tier's, which each later Start
// in the tier would meet again. A normal user has the io controller only where
// it is delegated, and systemd (since 252) delegates pids, memory and cpu
// to a user's manager (units/user@.service.in), not io: an admin adds it
// with the line Delegate=pids memory cpu io in a drop-in for
// user@.service. Without it nothing changes, and [Inspect] names the
// missing lever ([Applied]'s Missing) and that line.
//
// # Platforms
//
// On macOS children run under /usr/sbin/taskpolicy and threads are lowered
// through libSystem, without cgo; on Windows children get their priority
// class through SysProcAttr.CreationFlags and Do lowers the thread's
// priority. This repository's CI compiles the macOS code and runs the
// Windows tests under Wine, which ignores priority classes: neither effect
// is observed there. Elsewhere Start and Do apply nothing and Inspect
// returns an error wrapping [errors.ErrUnsupported].
//
// # Stability
//
// The module is v0; each change is listed in the repository's CHANGELOG.md.
// The levels each tier and mode apply will follow what measurements show,
// and with them what Describe prints. What no v0 or v1 release will
// change: mode off applies nothing, Start and Do never lower a thread the
// app keeps, and a tier only lowers.
package qos
