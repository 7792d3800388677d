// Trampolines to libSystem for qos_darwin.go, as x/sys/unix's
// zsyscall_darwin_*.s: the same text assembles for amd64 and arm64.

#include "textflag.h"

TEXT libc_setiopolicy_np_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_setiopolicy_np(SB)
GLOBL	·libc_setiopolicy_np_trampoline_addr(SB), RODATA, $8
DATA	·libc_setiopolicy_np_trampoline_addr(SB)/8, $libc_setiopolicy_np_trampoline<>(SB)

TEXT libc_getiopolicy_np_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_getiopolicy_np(SB)
GLOBL	·libc_getiopolicy_np_trampoline_addr(SB), RODATA, $8
DATA	·libc_getiopolicy_np_trampoline_addr(SB)/8, $libc_getiopolicy_np_trampoline<>(SB)

TEXT libc_pthread_set_qos_class_self_np_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_pthread_set_qos_class_self_np(SB)
GLOBL	·libc_pthread_set_qos_class_self_np_trampoline_addr(SB), RODATA, $8
DATA	·libc_pthread_set_qos_class_self_np_trampoline_addr(SB)/8, $libc_pthread_set_qos_class_self_np_trampoline<>(SB)

TEXT libc_pthread_get_qos_class_np_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_pthread_get_qos_class_np(SB)
GLOBL	·libc_pthread_get_qos_class_np_trampoline_addr(SB), RODATA, $8
DATA	·libc_pthread_get_qos_class_np_trampoline_addr(SB)/8, $libc_pthread_get_qos_class_np_trampoline<>(SB)

TEXT libc_pthread_self_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_pthread_self(SB)
GLOBL	·libc_pthread_self_trampoline_addr(SB), RODATA, $8
DATA	·libc_pthread_self_trampoline_addr(SB)/8, $libc_pthread_self_trampoline<>(SB)
