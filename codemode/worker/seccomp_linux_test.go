//go:build linux && (amd64 || arm64)

package worker

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// A seccomp filter cannot be taken off again, so the tests that install it
// re-execute the test binary: TestSeccompChild, run with seccompChildEnv
// set, installs the filter in the child process and reports what it sees;
// the parent test asserts the child's report.
const seccompChildEnv = "CODEMODE_SECCOMP_CHILD"

// What the parent gives the child to use after the filter.
const (
	seccompDialEnv     = "CODEMODE_SECCOMP_DIAL" // the address of a listener of the parent's
	seccompFileEnv     = "CODEMODE_SECCOMP_FILE" // a file the parent wrote
	seccompFileText    = "written by the parent"
	seccompStdin       = "sent by the parent"
	seccompStdoutProof = "written by the child after the filter"
)

// The verdicts the filter returns.
const (
	seccompAllowed = unix.SECCOMP_RET_ALLOW
	seccompEPERM   = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	seccompENOSYS  = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	seccompKilled  = unix.SECCOMP_RET_KILL_PROCESS
)

// Clone flags as the Go runtime (cloneFlags in runtime/os_linux.go), glibc's
// pthread_create, fork and os/exec pass them.
const (
	goThreadFlags = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES |
		unix.CLONE_SIGHAND | unix.CLONE_SYSVSEM | unix.CLONE_THREAD
	pthreadFlags = goThreadFlags | unix.CLONE_SETTLS |
		unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID
	forkFlags   = uint64(unix.SIGCHLD)
	osExecFlags = unix.CLONE_VM | unix.CLONE_VFORK | unix.CLONE_PIDFD | forkFlags
)

// filterVM runs the filter as restrictSyscalls assembles it: its raw
// instructions, read back.
func filterVM(t *testing.T) *bpf.VM {
	t.Helper()
	raw, err := bpf.Assemble(syscallFilterProgram())
	if err != nil {
		t.Fatal(err)
	}
	prog, decoded := bpf.Disassemble(raw)
	if !decoded {
		t.Fatal("the assembled filter does not read back")
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

// verdict is what the filter answers to system call nr for arch with
// first argument arg0. The VM loads words big-endian, so each word is
// written that way at the offset where the kernel puts it.
func verdict(t *testing.T, vm *bpf.VM, arch, nr uint32, arg0 uint64) uint32 {
	t.Helper()
	data := make([]byte, 64) // sizeof(struct seccomp_data)
	binary.BigEndian.PutUint32(data[seccompNr:], nr)
	binary.BigEndian.PutUint32(data[seccompArch:], arch)
	binary.BigEndian.PutUint32(data[seccompArg0:], uint32(arg0))
	binary.BigEndian.PutUint32(data[seccompArg0+4:], uint32(arg0>>32))
	v, err := vm.Run(data)
	if err != nil {
		t.Fatalf("running the filter on syscall %d: %v", nr, err)
	}
	return uint32(v)
}

func TestSyscallFilterProgram(t *testing.T) {
	vm := filterVM(t)
	type call struct {
		name string
		arch uint32
		nr   uint32
		arg0 uint64
		want uint32
	}
	calls := []call{
		{"go runtime thread", auditArch, unix.SYS_CLONE, goThreadFlags, seccompAllowed},
		{"pthread_create thread", auditArch, unix.SYS_CLONE, pthreadFlags, seccompAllowed},
		{"thread, high half of the flags set", auditArch, unix.SYS_CLONE, 0xffffffff<<32 | goThreadFlags, seccompAllowed},
		{"fork", auditArch, unix.SYS_CLONE, forkFlags, seccompEPERM},
		{"os/exec", auditArch, unix.SYS_CLONE, osExecFlags, seccompEPERM},
		{"process in a new user namespace", auditArch, unix.SYS_CLONE, unix.CLONE_NEWUSER | forkFlags, seccompEPERM},
		{"thread in a new network namespace", auditArch, unix.SYS_CLONE, goThreadFlags | unix.CLONE_NEWNET, seccompEPERM},
		{"thread in a new mount namespace", auditArch, unix.SYS_CLONE, goThreadFlags | unix.CLONE_NEWNS, seccompEPERM},
		{"clone3", auditArch, unix.SYS_CLONE3, 0, seccompENOSYS},
		{"another architecture's read", unix.AUDIT_ARCH_I386, 3, 0, seccompKilled},
		{"another architecture's number for socket", unix.AUDIT_ARCH_I386, 359, 0, seccompKilled},
	}
	if foreignSyscallBit != 0 {
		calls = append(calls,
			call{"x32 socket", auditArch, foreignSyscallBit | unix.SYS_SOCKET, 0, seccompKilled},
			call{"x32 read", auditArch, foreignSyscallBit | unix.SYS_READ, 0, seccompKilled})
	}
	for _, nr := range refusedSyscalls {
		calls = append(calls, call{"refused " + strconv.Itoa(int(nr)), auditArch, nr, 0, seccompEPERM})
	}
	// What a worker does besides what the runtime does (see
	// TestSyscallFilterAllowsTheGoRuntime): files, pipes, time, signals,
	// and what glibc does for a new thread.
	for _, nr := range []uint32{
		unix.SYS_READ, unix.SYS_WRITE, unix.SYS_OPENAT, unix.SYS_CLOSE,
		unix.SYS_FSTAT, unix.SYS_NEWFSTATAT, unix.SYS_LSEEK, unix.SYS_PREAD64,
		unix.SYS_PWRITE64, unix.SYS_GETDENTS64, unix.SYS_READLINKAT,
		unix.SYS_FCNTL, unix.SYS_PIPE2, unix.SYS_EPOLL_CREATE1,
		unix.SYS_EPOLL_CTL, unix.SYS_EPOLL_PWAIT, unix.SYS_EVENTFD2,
		unix.SYS_MMAP, unix.SYS_MUNMAP, unix.SYS_MPROTECT, unix.SYS_MADVISE,
		unix.SYS_FUTEX, unix.SYS_RT_SIGACTION, unix.SYS_RT_SIGPROCMASK,
		unix.SYS_RT_SIGRETURN, unix.SYS_SIGALTSTACK, unix.SYS_TGKILL,
		unix.SYS_GETPID, unix.SYS_GETPPID, unix.SYS_GETTID,
		unix.SYS_SCHED_YIELD, unix.SYS_SCHED_GETAFFINITY, unix.SYS_GETRANDOM,
		unix.SYS_PRCTL, unix.SYS_NANOSLEEP, unix.SYS_CLOCK_GETTIME,
		unix.SYS_CLOCK_NANOSLEEP, unix.SYS_PRLIMIT64, unix.SYS_SET_ROBUST_LIST,
		unix.SYS_RSEQ, unix.SYS_MEMBARRIER, unix.SYS_EXIT, unix.SYS_EXIT_GROUP,
		unix.SYS_SECCOMP,
	} {
		calls = append(calls, call{"allowed " + strconv.Itoa(int(nr)), auditArch, nr, 0, seccompAllowed})
	}
	for _, c := range calls {
		if got := verdict(t, vm, c.arch, c.nr, c.arg0); got != c.want {
			t.Errorf("%s (arch %#x, nr %d, arg0 %#x): verdict %#x, want %#x", c.name, c.arch, c.nr, c.arg0, got, c.want)
		}
	}
}

// TestSyscallFilterAllowsTheGoRuntime reads the system call numbers the
// installed Go's runtime makes itself and checks the filter allows each.
func TestSyscallFilterAllowsTheGoRuntime(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("no go command to find the runtime's sources: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	define := regexp.MustCompile(`(?m)^\s*(?:#define\s+)?SYS_(\w+)\s*=?\s*(\d+)\s*$`)
	vm := filterVM(t)
	seen := 0
	for _, file := range []string{
		"runtime/sys_linux_" + runtime.GOARCH + ".s",
		"internal/runtime/syscall/linux/defs_linux_" + runtime.GOARCH + ".go",
	} {
		text, err := os.ReadFile(filepath.Join(src, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range define.FindAllStringSubmatch(string(text), -1) {
			name := strings.ToLower(m[1])
			nr, _ := strconv.Atoi(m[2])
			seen++
			arg0, want := uint64(0), uint32(seccompAllowed)
			switch name {
			case "clone":
				arg0 = goThreadFlags
			case "socket", "connect":
				// Only on Android, to reach the system log (write_err_android.go).
				want = seccompEPERM
			}
			if got := verdict(t, vm, auditArch, uint32(nr), arg0); got != want {
				t.Errorf("the runtime's %s (%d, %s): verdict %#x, want %#x", name, nr, file, got, want)
			}
		}
	}
	if seen < 30 {
		t.Fatalf("read only %d system call numbers from the runtime's sources", seen)
	}
}

// seccompChecks run in the child after the filter is installed; the parent
// requires each to pass.
var seccompChecks = []struct {
	name  string
	check func(t *testing.T, c *seccompChild)
}{
	{"threads_from_before_the_filter_are_filtered", func(t *testing.T, c *seccompChild) {
		for i, err := range c.preFilterSockets {
			if !errors.Is(err, unix.EPERM) {
				t.Errorf("socket on thread %d, made before the filter: %v, want EPERM", c.preFilterThreads[i], err)
			}
		}
	}},
	{"every_thread_has_the_filter_and_no_new_privs", func(t *testing.T, c *seccompChild) {
		tids := requireThreadStatus(t, "\nSeccomp:\t2\n", "\nNoNewPrivs:\t1\n")
		for _, tid := range c.preFilterThreads {
			if !slices.Contains(tids, tid) {
				t.Errorf("thread %d, made before the filter, is not among the threads %v", tid, tids)
			}
		}
	}},
	{"tcp_listen_refused", func(t *testing.T, c *seccompChild) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			ln.Close()
		}
		if !errors.Is(err, unix.EPERM) {
			t.Errorf("listen: %v, want EPERM", err)
		}
	}},
	{"dial_to_the_parent_refused", func(t *testing.T, c *seccompChild) {
		conn, err := net.Dial("tcp", os.Getenv(seccompDialEnv))
		if err == nil {
			conn.Close()
		}
		if !errors.Is(err, unix.EPERM) {
			t.Errorf("dial %s: %v, want EPERM", os.Getenv(seccompDialEnv), err)
		}
	}},
	{"unix_sockets_refused", func(t *testing.T, c *seccompChild) {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		if !errors.Is(err, unix.EPERM) {
			t.Errorf("socket(AF_UNIX): %v, want EPERM", err)
		}
		_, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if !errors.Is(err, unix.EPERM) {
			t.Errorf("socketpair(AF_UNIX): %v, want EPERM", err)
		}
	}},
	{"every_refused_syscall_answers_eperm", func(t *testing.T, c *seccompChild) {
		// Arguments of all ones are invalid for each of these, so without
		// the filter each would fail with an error of its own (EINVAL,
		// EBADF, EFAULT...), or EPERM for an unprivileged user.
		bad := ^uintptr(0)
		for _, nr := range refusedSyscalls {
			if slices.Contains(newProcessSyscalls, nr) {
				continue // new_processes_refused
			}
			_, _, errno := unix.Syscall6(uintptr(nr), bad, bad, bad, bad, bad, bad)
			if errno != unix.EPERM {
				t.Errorf("syscall %d: errno %v, want EPERM", nr, errno)
			}
		}
	}},
	{"new_processes_refused", func(t *testing.T, c *seccompChild) {
		if err := forkLike(unix.SYS_CLONE, uintptr(forkFlags)); !errors.Is(err, unix.EPERM) {
			t.Errorf("clone(SIGCHLD): %v, want EPERM", err)
		}
		// A vfork the filter let through would share this stack with a
		// child that returns on it: the child process would crash, which
		// the parent test reports.
		for _, nr := range newProcessSyscalls {
			if err := forkLike(uintptr(nr), 0); !errors.Is(err, unix.EPERM) {
				t.Errorf("syscall %d: %v, want EPERM", nr, err)
			}
		}
	}},
	{"thread_in_a_new_namespace_refused", func(t *testing.T, c *seccompChild) {
		// Without CLONE_SIGHAND the kernel itself would answer EINVAL.
		_, _, errno := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_THREAD|unix.CLONE_NEWNET, 0, 0, 0, 0, 0)
		if errno != unix.EPERM {
			t.Errorf("clone(CLONE_THREAD|CLONE_NEWNET): errno %v, want EPERM", errno)
		}
	}},
	{"clone3_answers_enosys", func(t *testing.T, c *seccompChild) {
		// Without the filter a zero size is EINVAL.
		_, _, errno := unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
		if errno != unix.ENOSYS {
			t.Errorf("clone3: errno %v, want ENOSYS", errno)
		}
	}},
	{"os_exec_refused", func(t *testing.T, c *seccompChild) {
		err := exec.Command("/bin/true").Run()
		if !errors.Is(err, unix.EPERM) {
			t.Errorf("running /bin/true: %v, want EPERM", err)
		}
	}},
	{"execve_refused", func(t *testing.T, c *seccompChild) {
		// Were it let through, /bin/true would replace this process and
		// the parent would miss the checks' results.
		err := syscall.Exec("/bin/true", []string{"true"}, nil)
		if !errors.Is(err, unix.EPERM) {
			t.Errorf("execve /bin/true: %v, want EPERM", err)
		}
	}},
	{"new_threads_work", func(t *testing.T, c *seccompChild) {
		before := threadIDs(t)
		const n = 64
		tids := make(chan int)
		release := make(chan struct{})
		defer close(release)
		for range n {
			go func() {
				// Each goroutine holds its thread while it waits, so
				// the runtime has to make new ones for the rest.
				runtime.LockOSThread()
				tids <- unix.Gettid()
				<-release
			}()
		}
		seen := map[int]bool{}
		for range n {
			select {
			case tid := <-tids:
				seen[tid] = true
			case <-time.After(time.Minute):
				t.Fatalf("only %d of %d goroutines on threads of their own started", len(seen), n)
			}
		}
		if len(seen) != n {
			t.Errorf("%d goroutines locked to threads ran on %d threads", n, len(seen))
		}
		made := 0
		for tid := range seen {
			if !slices.Contains(before, tid) {
				made++
			}
		}
		if made == 0 {
			t.Error("no thread was made after the filter")
		}
	}},
	{"timers_work", func(t *testing.T, c *seccompChild) {
		start := time.Now()
		timer := time.NewTimer(20 * time.Millisecond)
		fired := make(chan struct{})
		time.AfterFunc(time.Millisecond, func() { close(fired) })
		<-fired
		time.Sleep(time.Millisecond)
		<-timer.C
		if elapsed := time.Since(start); elapsed < 20*time.Millisecond {
			t.Errorf("a 20ms timer fired after %v", elapsed)
		}
	}},
	{"files_work", func(t *testing.T, c *seccompChild) {
		got, err := os.ReadFile(os.Getenv(seccompFileEnv))
		if err != nil || string(got) != seccompFileText {
			t.Errorf("reading the parent's file: %q, %v", got, err)
		}
		tmp, err := os.CreateTemp("", "seccomp")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		if _, err := tmp.WriteString("x"); err != nil {
			t.Error(err)
		}
	}},
	{"pipes_work", func(t *testing.T, c *seccompChild) {
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil || line != seccompStdin+"\n" {
			t.Errorf("reading stdin: %q, %v", line, err)
		}
		if _, err := fmt.Fprintln(os.Stdout, seccompStdoutProof); err != nil {
			t.Errorf("writing stdout: %v", err)
		}
	}},
	{"gc_and_a_100mb_allocation_work", func(t *testing.T, c *seccompChild) {
		allocateAndCollect()
	}},
}

// seccompChild is what the child learned before installing the filter.
type seccompChild struct {
	preFilterThreads []int   // threads made before the filter, held until the checks end
	preFilterSockets []error // what socket gave on each after it
}

func TestSeccompChild(t *testing.T) {
	switch mode := os.Getenv(seccompChildEnv); mode {
	case "":
		t.Skip("runs only in the child process the seccomp tests start")
	case "checks":
		c := new(seccompChild)
		var trySockets func() []error
		var release func()
		c.preFilterThreads, trySockets, release = lockedThreads(8, trySocket)
		defer release()
		if err := restrictSyscalls(); err != nil {
			t.Fatal(err)
		}
		c.preFilterSockets = trySockets()
		for _, check := range seccompChecks {
			t.Run(check.name, func(t *testing.T) { check.check(t, c) })
		}
	case "x32":
		// The kill would otherwise leave a core dump.
		if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
			t.Fatal(err)
		}
		if err := restrictSyscalls(); err != nil {
			t.Fatal(err)
		}
		_, _, errno := unix.RawSyscall(foreignSyscallBit|unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, 0)
		t.Errorf("an x32 socket call returned errno %v instead of killing the process", errno)
	case "bench":
		const calls = 200_000
		before := timeSyscall(calls)
		start := time.Now()
		err := restrictSyscalls()
		install := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		after := timeSyscall(calls)
		fmt.Printf("seccomp install_ns=%d getppid_ns_before=%.1f getppid_ns_after=%.1f\n", install.Nanoseconds(), before, after)
	default:
		t.Fatalf("unknown %s %q", seccompChildEnv, mode)
	}
}

// lockedThreads starts n goroutines, each locked to a thread of its own,
// and returns those threads' ids once all run. tryAll has each thread call
// try and returns what it gave; release ends the goroutines, and their
// threads with them.
func lockedThreads(n int, try func() error) (tids []int, tryAll func() []error, release func()) {
	ready := make(chan int)
	start := make(chan struct{})
	results := make(chan error)
	done := make(chan struct{})
	for range n {
		go func() {
			runtime.LockOSThread()
			ready <- unix.Gettid()
			<-start
			results <- try()
			<-done
		}()
	}
	for range n {
		tids = append(tids, <-ready)
	}
	tryAll = func() []error {
		close(start)
		var errs []error
		for range n {
			errs = append(errs, <-results)
		}
		return errs
	}
	return tids, tryAll, func() { close(done) }
}

// trySocket makes a TCP socket and closes it.
func trySocket() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// allocateAndCollect touches 100 MB, drops it, collects and returns the
// memory to the system.
func allocateAndCollect() {
	big := make([]byte, 100<<20)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	runtime.KeepAlive(big)
	big = nil
	runtime.GC()
	debug.FreeOSMemory()
}

// requireThreadStatus fails t unless the status of every thread of this
// process holds each of wants, and returns the threads' ids.
func requireThreadStatus(t *testing.T, wants ...string) []int {
	t.Helper()
	tids := threadIDs(t)
	for _, tid := range tids {
		status, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid))
		if err != nil {
			continue // the thread has gone
		}
		for _, want := range wants {
			if !strings.Contains(string(status), want) {
				t.Errorf("thread %d: status lacks %q", tid, strings.TrimSpace(want))
			}
		}
	}
	return tids
}

// threadIDs lists the threads of this process.
func threadIDs(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var tids []int
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}

// forkLike makes system call nr, which makes a process, with flags as its
// first argument. Should the filter let it through, the new process exits
// at once and is reaped, and forkLike says what happened.
//
//go:norace
func forkLike(nr, flags uintptr) error {
	pid, _, errno := syscall.RawSyscall6(nr, flags, 0, 0, 0, 0, 0)
	if errno != 0 {
		return errno
	}
	if pid == 0 {
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var status unix.WaitStatus
	unix.Wait4(int(pid), &status, 0, nil)
	return fmt.Errorf("made process %d", pid)
}

// timeSyscall is the mean time of a system call the filter allows.
func timeSyscall(calls int) float64 {
	start := time.Now()
	for range calls {
		unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0)
	}
	return float64(time.Since(start).Nanoseconds()) / float64(calls)
}

// runSeccompChild re-executes the test binary as a child in mode, with
// stdin as its standard input and extra added to its environment, and
// returns its output.
func runSeccompChild(tb testing.TB, mode, stdin string, extra ...string) (string, error) {
	tb.Helper()
	return runChildTest(tb, os.Args[0], "TestSeccompChild", stdin, append([]string{seccompChildEnv + "=" + mode}, extra...)...)
}

// runChildTest runs test alone in the test binary bin, in a temporary
// directory, with stdin as its standard input and env added to its
// environment, and returns its output.
func runChildTest(tb testing.TB, bin, test, stdin string, env ...string) (string, error) {
	tb.Helper()
	cmd := exec.CommandContext(tb.Context(), bin, "-test.run=^"+test+"$", "-test.v", "-test.count=1", "-test.timeout=2m")
	// The child tests one process's confinement: no worker pool of its own
	// (childTest), which it could not start once confined.
	cmd.Env = append(append(os.Environ(), childTest+"=1"), env...)
	cmd.Dir = tb.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

func TestRestrictSyscalls(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	file := filepath.Join(t.TempDir(), "for-the-child")
	if err := os.WriteFile(file, []byte(seccompFileText), 0o600); err != nil {
		t.Fatal(err)
	}

	out, err := runSeccompChild(t, "checks", seccompStdin+"\n",
		seccompDialEnv+"="+ln.Addr().String(), seccompFileEnv+"="+file)
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, check := range seccompChecks {
		if !strings.Contains(out, "--- PASS: TestSeccompChild/"+check.name+" ") {
			t.Errorf("the child did not pass %s", check.name)
		}
	}
	if !strings.Contains(out, "\n"+seccompStdoutProof+"\n") {
		t.Error("the child's stdout lacks what it wrote after the filter")
	}
	if t.Failed() {
		t.Logf("child output:\n%s", out)
	}

	ln.(*net.TCPListener).SetDeadline(time.Now().Add(50 * time.Millisecond))
	if conn, err := ln.Accept(); err == nil {
		conn.Close()
		t.Error("a connection from the child reached the parent's listener")
	}
}

func TestRestrictSyscallsKillsOnX32(t *testing.T) {
	if foreignSyscallBit == 0 {
		t.Skipf("%s has no second set of system call numbers", runtime.GOARCH)
	}
	out, err := runSeccompChild(t, "x32", "")
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("child: %v, want it killed by SIGSYS\n%s", err, out)
	}
	status := exit.Sys().(syscall.WaitStatus)
	if !status.Signaled() || status.Signal() != syscall.SIGSYS {
		t.Fatalf("child ended with %v, want it killed by SIGSYS\n%s", exit, out)
	}
}

// BenchmarkRestrictSyscalls starts a child per iteration that installs the
// filter and times it, and a getppid before and after; ns/op is mostly the
// child's start.
func BenchmarkRestrictSyscalls(b *testing.B) {
	benchInstall(b, "seccomp", "getppid", func() (string, error) { return runSeccompChild(b, "bench", "") })
}

// benchInstall starts a child per iteration with start, reads the figures
// it prints as "<what> install_ns=%d <op>_ns_before=%g <op>_ns_after=%g",
// and reports their means.
func benchInstall(b *testing.B, what, op string, start func() (string, error)) {
	format := what + " install_ns=%d " + op + "_ns_before=%g " + op + "_ns_after=%g"
	var install, before, after float64
	for b.Loop() {
		out, err := start()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		i := strings.Index(out, what+" install_ns=")
		if i < 0 {
			b.Fatalf("no figures in the child's output:\n%s", out)
		}
		var ns int64
		var pre, post float64
		if _, err := fmt.Sscanf(out[i:], format, &ns, &pre, &post); err != nil {
			b.Fatalf("reading the child's figures: %v\n%s", err, out)
		}
		install += float64(ns)
		before += pre
		after += post
	}
	n := float64(b.N)
	b.ReportMetric(install/n/1000, "install-µs")
	b.ReportMetric(before/n, op+"-ns-before")
	b.ReportMetric(after/n, op+"-ns-after")
}
