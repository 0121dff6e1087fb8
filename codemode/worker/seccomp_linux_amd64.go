package worker

import "golang.org/x/sys/unix"

// auditArch is the architecture the filter's system call numbers are for.
const auditArch = unix.AUDIT_ARCH_X86_64

// foreignSyscallBit marks the x32 system calls, which share amd64's audit
// architecture but have numbers of their own.
const foreignSyscallBit = 0x40000000

// newProcessSyscalls make processes; amd64 has them besides clone.
var newProcessSyscalls = []uint32{unix.SYS_FORK, unix.SYS_VFORK}

// oldFileSyscalls change files' modes, owners and times; arm64 has only
// their *at forms.
var oldFileSyscalls = []uint32{unix.SYS_CHMOD, unix.SYS_CHOWN, unix.SYS_LCHOWN, unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT}
