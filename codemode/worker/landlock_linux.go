package worker

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// processConfinement says, for a worker's log, what confineProcess
// enforces on a kernel with every Landlock feature it asks for.
const processConfinement = "landlock: no file written, made, removed or run; no tcp bind or connect; " +
	"no signal, abstract socket, ptrace, /proc/<pid>/mem or environ of a process outside the worker; no capabilities"

// The Landlock ABI versions that brought what confineProcess uses. Version
// 1 (Linux 5.13) already keeps a domain from ptrace-attaching to, or
// opening /proc/<pid>/mem and /proc/<pid>/environ of, any process outside
// it; the later ones add rights.
const (
	landlockABIRefer    = 2 // Linux 5.19: moving and linking between directories
	landlockABITruncate = 3 // 6.2
	landlockABITCP      = 4 // 6.7
	landlockABIIoctlDev = 5 // 6.10
	landlockABIScopes   = 6 // 6.12: signals and abstract unix sockets
	landlockABITSync    = 8 // one call confines every thread
)

// landlockErratumSignals is erratum 2 in the kernel's errata bitmask: the
// fix that lets threads of one process in different domains signal each
// other. Without it a thread confined with signal scoping could not signal
// its unconfined siblings, and the Go runtime's per-thread signals (which
// confine the other threads, and preempt goroutines) would stop working.
const landlockErratumSignals = 1 << (2 - 1)

// landlockWrites are the file rights of Landlock's first version that
// change the file system or run a program: confineProcess handles them all
// and allows none, so that no file can be written, made, removed or run
// anywhere. Reading files and directories stays allowed: the runtime and
// time zone loading read files.
const landlockWrites = unix.LANDLOCK_ACCESS_FS_EXECUTE |
	unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
	unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
	unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
	unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
	unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
	unix.LANDLOCK_ACCESS_FS_MAKE_SYM

// landlockRuleset is the ruleset confineProcess asks of a kernel with
// Landlock ABI version abi and errata bitmask errata, and what that kernel
// cannot enforce of it.
// landlockRulesetAttr is the kernel's struct landlock_ruleset_attr as of
// Landlock ABI 6, declared here: golang.org/x/sys renamed its fields and
// grew it between versions, and a build may get either.
type landlockRulesetAttr struct {
	HandledFS  uint64
	HandledNet uint64
	Scoped     uint64
}

func landlockRuleset(abi int, errata uint64) (landlockRulesetAttr, []string) {
	attr := landlockRulesetAttr{HandledFS: landlockWrites}
	var unenforced []string
	// Before REFER was a right, the first version refused every move and
	// link between directories: nothing is lost below version 2.
	if abi >= landlockABIRefer {
		attr.HandledFS |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= landlockABITruncate {
		attr.HandledFS |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	} else {
		unenforced = append(unenforced, "truncating files (needs abi 3)")
	}
	if abi >= landlockABITCP {
		attr.HandledNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	} else {
		unenforced = append(unenforced, "tcp bind and connect (needs abi 4)")
	}
	if abi >= landlockABIIoctlDev {
		attr.HandledFS |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	} else {
		unenforced = append(unenforced, "device ioctls (needs abi 5)")
	}
	if abi >= landlockABIScopes {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	} else {
		unenforced = append(unenforced, "abstract unix sockets outside the worker (needs abi 6)")
	}
	switch {
	case abi >= landlockABIScopes && errata&landlockErratumSignals != 0:
		attr.Scoped |= unix.LANDLOCK_SCOPE_SIGNAL
	case abi >= landlockABIScopes:
		unenforced = append(unenforced, "signals to processes outside the worker (the kernel lacks landlock erratum 2)")
	default:
		unenforced = append(unenforced, "signals to processes outside the worker (needs abi 6)")
	}
	return attr, unenforced
}

// confineProcess puts the worker's process, every thread of it, in a
// Landlock domain of landlockRuleset with no rules: the worker can still
// read files, but can write, make, remove, truncate or run none, and bind
// or connect no TCP socket; and through the domain's scoping it cannot
// ptrace, open /proc/<pid>/mem or /proc/<pid>/environ of, signal, or reach
// the abstract unix sockets of any process outside it, Caddy first. It
// sets no_new_privs first, as Landlock requires, and then empties every
// thread's capabilities (see dropCapabilities). It is for good: threads
// made later inherit all of it.
//
// Landlock's network rights cover TCP alone: an MPTCP or UDP socket binds
// and connects through a domain. Refusing sockets is restrictSyscalls'.
//
// A worker calls it once, before restrictSyscalls (whose filter allows the
// Landlock calls anyway) and before it reads any code. An error says what
// is not enforced; confineProcess never stops the worker. On a kernel
// without Landlock nothing is; on an older one, what its version lacks.
func confineProcess() error {
	abi, errata, err := landlockVersion()
	if err != nil {
		return err
	}
	return confineProcessAs(abi, errata)
}

// landlockVersion is the running kernel's Landlock ABI version and errata
// bitmask.
func landlockVersion() (abi int, errata uint64, err error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		// ENOSYS: not built in; EOPNOTSUPP: not in the boot's lsm= list.
		return 0, 0, fmt.Errorf("landlock: not available on this kernel: %w", errno)
	}
	// Kernels older than the errata query answer EINVAL: no erratum known.
	e, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_ERRATA)
	if errno != 0 {
		e = 0
	}
	return int(v), uint64(e), nil
}

// confineProcessAs is confineProcess on a kernel taken to have Landlock ABI
// version abi and errata bitmask errata; abi must not be above the running
// kernel's.
func confineProcessAs(abi int, errata uint64) error {
	attr, unenforced := landlockRuleset(abi, errata)
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET,
		uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock: not enforced: creating the abi %d ruleset: %w", abi, errno)
	}
	defer unix.Close(int(fd))
	if err := restrictEveryThread(abi, fd); err != nil {
		return fmt.Errorf("landlock: not enforced: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		unenforced = append(unenforced, err.Error())
	}
	if len(unenforced) > 0 {
		return fmt.Errorf("landlock abi %d: not enforced: %s", abi, strings.Join(unenforced, "; "))
	}
	return nil
}

// restrictEveryThread sets no_new_privs and enforces the ruleset fd on
// every thread of the process. landlock_restrict_self acts on its calling
// thread only, and a Go program has several threads before main runs (the
// runtime's monitor among them, which starts threads of its own), so the
// calling thread alone would leave goroutines running unconfined.
//
// From version 8 the kernel's TSYNC flag gives every thread the calling
// thread's new domain, and its no_new_privs. Before it, the Go runtime's
// AllThreadsSyscall makes both calls on every thread the runtime has, while
// the world is stopped and no thread is being made; each thread then has a
// domain of its own, built from the same ruleset, so none can reach a
// process outside the worker, and threads of one process may always
// signal and inspect each other. It needs no locked thread: it runs the
// call on each thread itself. AllThreadsSyscall is not available in a
// binary that uses cgo, whose C code could make threads the runtime does
// not know: such a binary is left unconfined on kernels before version 8.
func restrictEveryThread(abi int, fd uintptr) error {
	if abi >= landlockABITSync {
		// Landlock, like seccomp, takes no_new_privs from the calling
		// thread; TSYNC then sets it on the others.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("setting no_new_privs: %w", err)
		}
		_, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, unix.LANDLOCK_RESTRICT_SELF_TSYNC, 0)
		if errno != 0 {
			return fmt.Errorf("restricting every thread: %w", errno)
		}
		return nil
	}
	_, _, errno := syscall.AllThreadsSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0)
	if errno == syscall.ENOTSUP {
		return fmt.Errorf("kernel abi %d cannot confine all threads at once (needs abi %d) "+
			"and a binary built with cgo cannot confine each; build it with CGO_ENABLED=0", abi, landlockABITSync)
	}
	if errno != 0 {
		return fmt.Errorf("setting no_new_privs: %w", errno)
	}
	if _, _, errno := syscall.AllThreadsSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("restricting each thread: %w", errno)
	}
	return nil
}

// dropCapabilities empties the permitted, effective and inheritable
// capabilities of every thread, for good: with no_new_privs and no exec,
// nothing gives them back. A worker needs none, and one running as root
// must not keep CAP_PERFMON or CAP_SYS_ADMIN: the kernel lets a caller
// with either read another process's memory map and environment (its
// /proc/<pid>/environ, maps, smaps, auxv) whatever a Landlock domain says.
// Capabilities, like a domain before TSYNC, belong to each thread, so
// this needs AllThreadsSyscall; a cgo binary that holds no capability has
// nothing to drop.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData // the low and high 32 capabilities
	_, _, errno := syscall.AllThreadsSyscall(unix.SYS_CAPSET,
		uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&none[0])), 0)
	if errno == syscall.ENOTSUP {
		var held [2]unix.CapUserData
		if err := unix.Capget(&hdr, &held[0]); err != nil {
			return fmt.Errorf("capabilities: reading them: %w", err)
		}
		if held != none {
			return fmt.Errorf("capabilities kept (a binary built with cgo cannot drop them on every thread; " +
				"a root worker can read caddy's /proc/<pid>/environ and maps)")
		}
		return nil
	}
	if errno != 0 {
		return fmt.Errorf("capabilities: dropping them: %w", errno)
	}
	return nil
}
