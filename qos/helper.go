package qos

// Main runs this process as one of qos's helper processes when qos started
// it as one, and returns at once otherwise. Call it first thing in main, as
// re-exec libraries have it (moby's pkg/reexec.Init): on Linux, [Group]
// starts each command through two helper processes that are this very
// binary run again (/proc/self/exe), and only an app that calls Main lets
// them run as helpers instead of as a second copy of the app. Without it a
// Group holds less (see [Group]) and says so. In a helper process Main
// never returns: it exits with the helper's status.
//
// Package init functions run before main, in helpers too: keep them free
// of work with side effects (opening windows, taking locks), as for any
// program that re-executes itself. Main does nothing on other platforms. A
// test binary whose tests start a Group's commands calls it before m.Run.
//
//	func main() {
//		qos.Main()
//		// the app
//	}
func Main() { runHelper() }
