//go:build windows || linux

package qos

// The priority class Start gives a child on Windows, through CreateProcess's
// creation flags. It is decided here, with no Windows call, so that it is
// tested on Linux too (creationflags_test.go).

// Priority class flags of CreateProcess's dwCreationFlags, from WinBase.h
// ("Process Creation Flags" and GetPriorityClass, learn.microsoft.com),
// lowest class first.
const (
	idlePriorityClass        = 0x00000040 // IDLE_PRIORITY_CLASS
	belowNormalPriorityClass = 0x00004000 // BELOW_NORMAL_PRIORITY_CLASS
	normalPriorityClass      = 0x00000020 // NORMAL_PRIORITY_CLASS
	aboveNormalPriorityClass = 0x00008000 // ABOVE_NORMAL_PRIORITY_CLASS
	highPriorityClass        = 0x00000080 // HIGH_PRIORITY_CLASS
	realtimePriorityClass    = 0x00000100 // REALTIME_PRIORITY_CLASS
)

// priorityClasses lists the class flags from the lowest class to the highest.
var priorityClasses = [...]uint32{
	idlePriorityClass, belowNormalPriorityClass, normalPriorityClass,
	aboveNormalPriorityClass, highPriorityClass, realtimePriorityClass,
}

// withPriorityClass returns the creation flags with class (one class flag,
// or 0 for none) applied, and no other change: exactly one class flag when
// flags or class holds one, the lowest of those present. So a caller that
// already chose a class lower than the tier's keeps it, and one that chose a
// higher class is lowered to the tier's; Start never raises a command.
//
// CreateProcess takes the class from these flags, and its documentation
// describes one class flag or none ("If none of the priority class flags is
// specified, the priority class defaults to NORMAL_PRIORITY_CLASS",
// CreateProcessW, dwCreationFlags); what several mean is not documented (the
// ReactOS implementation, BasepConvertPriorityClass in
// dll/win32/kernel32/client/proc.c, takes the lowest). Passing one keeps the
// result defined.
func withPriorityClass(flags, class uint32) uint32 {
	var all uint32
	for _, c := range priorityClasses {
		all |= c
	}
	present := flags&all | class
	for _, c := range priorityClasses {
		if present&c != 0 {
			return flags&^all | c
		}
	}
	return flags
}
