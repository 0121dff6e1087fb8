//go:build linux && (amd64 || arm64)

package worker

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// syscallFilter says, for a worker's log, what restrictSyscalls refuses on
// this system.
const syscallFilter = "seccomp: sockets, exec, new processes, file mode and owner changes and kernel administration refused"

// refusedSyscalls answer EPERM once restrictSyscalls has run. A worker
// talks to Caddy over its stdin and stdout pipes and runs nothing but
// JavaScript, so it needs none of them; a compromised worker could use
// them to reach the network, run a program, or work on the kernel or on
// other processes.
var refusedSyscalls = append([]uint32{
	// The network, and local sockets to other processes.
	unix.SYS_SOCKET, unix.SYS_SOCKETPAIR, unix.SYS_CONNECT, unix.SYS_BIND,
	unix.SYS_LISTEN, unix.SYS_ACCEPT, unix.SYS_ACCEPT4,
	unix.SYS_SENDTO, unix.SYS_SENDMSG, unix.SYS_SENDMMSG,
	unix.SYS_RECVFROM, unix.SYS_RECVMSG, unix.SYS_RECVMMSG,
	unix.SYS_GETSOCKOPT, unix.SYS_SETSOCKOPT, unix.SYS_SHUTDOWN,
	unix.SYS_GETPEERNAME, unix.SYS_GETSOCKNAME,

	// Programs. New processes are refused at clone too (see
	// syscallFilterProgram).
	unix.SYS_EXECVE, unix.SYS_EXECVEAT,

	// Other processes' memory and file descriptors: Caddy runs as the same
	// user, so these would reach its credentials.
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_PIDFD_GETFD,

	// Mounts, the root directory and namespaces, with the newer mount calls
	// that would otherwise do what mount does.
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	unix.SYS_SETNS, unix.SYS_UNSHARE,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
	unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_MOUNT_SETATTR,
	unix.SYS_OPEN_BY_HANDLE_AT,

	// Kernel interfaces a worker has no use for and that have carried
	// kernel bugs. io_uring would also run socket and file operations this
	// filter never sees.
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_USERFAULTFD,

	// Kernel administration.
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_REBOOT,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF,

	// Changes to files' modes, owners, times and extended attributes,
	// which Landlock's rights do not cover (see confineProcess).
	unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2,
	unix.SYS_FCHOWN, unix.SYS_FCHOWNAT, unix.SYS_UTIMENSAT,
	unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR,
	unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR,
}, append(newProcessSyscalls, oldFileSyscalls...)...)

// namespaceCloneFlags are the clone flags that put the new task in new
// namespaces. CLONE_NEWTIME is not among them: clone reads that bit as part
// of the exit signal, and only clone3 and unshare, both refused, take it.
const namespaceCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP |
	unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET

// Offsets into the kernel's struct seccomp_data, which the filter reads 32
// bits at a time.
const (
	seccompNr   = 0
	seccompArch = 4
	// seccompArg0 is the low half of the first argument (amd64 and arm64
	// are little-endian); clone reads only that half of its flags.
	seccompArg0 = 16
)

var (
	seccompAllow   = bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW}
	seccompRefuse  = bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}
	seccompNoSys   = bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)}
	seccompKillAll = bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS}
)

// syscallFilterProgram is the classic BPF program restrictSyscalls installs.
// It kills the process on a system call made for another architecture (or,
// on amd64, through the x32 numbers), whose numbers the table below does
// not describe; answers EPERM for refusedSyscalls and for a clone that
// makes a process rather than a thread; answers ENOSYS for clone3, whose
// flags sit in memory a filter cannot read, so that callers (glibc's
// pthread_create) fall back to clone; and allows everything else.
func syscallFilterProgram() []bpf.Instruction {
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: seccompArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		seccompKillAll,
		bpf.LoadAbsolute{Off: seccompNr, Size: 4},
	}
	if foreignSyscallBit != 0 {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpBitsNotSet, Val: foreignSyscallBit, SkipTrue: 1},
			seccompKillAll)
	}
	for _, nr := range refusedSyscalls {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: 1},
			seccompRefuse)
	}
	return append(prog,
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.SYS_CLONE3, SkipTrue: 1},
		seccompNoSys,

		// The Go runtime and pthread_create make threads with CLONE_THREAD;
		// fork, vfork and os/exec make processes without it.
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.SYS_CLONE, SkipTrue: 5},
		bpf.LoadAbsolute{Off: seccompArg0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: unix.CLONE_THREAD, SkipTrue: 1},
		seccompRefuse,
		bpf.JumpIf{Cond: bpf.JumpBitsNotSet, Val: namespaceCloneFlags, SkipTrue: 1},
		seccompRefuse,
		seccompAllow,
	)
}

// restrictSyscalls sets no_new_privs and installs syscallFilterProgram on
// every thread of the process, for good: threads made later inherit it. A
// worker calls it once, right after it starts, before it reads any code.
func restrictSyscalls() error {
	raw, err := bpf.Assemble(syscallFilterProgram())
	if err != nil {
		return fmt.Errorf("seccomp: assembling the filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, ins := range raw {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}

	// Both calls act on the calling thread: seccomp refuses an unprivileged
	// filter unless that thread has no_new_privs, and TSYNC then sets
	// no_new_privs and the filter on all the others.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: setting no_new_privs: %w", err)
	}
	tid, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return fmt.Errorf("seccomp: installing the filter: %w", errno)
	}
	if tid != 0 {
		return fmt.Errorf("seccomp: thread %d could not take the filter", tid)
	}
	return nil
}
