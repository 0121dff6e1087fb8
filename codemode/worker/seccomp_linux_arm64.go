package worker

import "golang.org/x/sys/unix"

// auditArch is the architecture the filter's system call numbers are for.
const auditArch = unix.AUDIT_ARCH_AARCH64

// foreignSyscallBit is zero: arm64 has one set of system call numbers.
const foreignSyscallBit = 0

// newProcessSyscalls is empty: arm64 makes processes with clone only.
var newProcessSyscalls []uint32

// oldFileSyscalls is empty: arm64 has only the *at forms.
var oldFileSyscalls []uint32
