//go:build linux && (amd64 || arm64)

package worker

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A Landlock domain, like a seccomp filter, cannot be left again, so the
// tests that make one re-execute the test binary: TestLandlockChild, run
// with landlockChildEnv set to a mode, tries landlockEscapes on its parent,
// the test process, and reports what it sees; the parent test asserts the
// child's report and what reached it.
const landlockChildEnv = "CODEMODE_LANDLOCK_CHILD"

// The modes of TestLandlockChild.
const (
	landlockUnconfined   = "unconfined"
	landlockConfined     = "confineProcess"
	landlockThenSeccomp  = "confineProcess_then_restrictSyscalls"
	landlockAfterSeccomp = "restrictSyscalls_then_confineProcess"
	landlockWithCgo      = "confineProcess_with_cgo"
	landlockAsABI        = "as_abi_" // followed by the version confineProcessAs is given
	landlockBench        = "bench"
)

const (
	landlockStdin     = "sent by the parent"
	landlockReadText  = "written before the domain"
	landlockRemoveDir = "remove-me.d"
)

// What the parent gives the child to reach after confining itself.
const (
	landlockTCPEnv    = "CODEMODE_LANDLOCK_TCP"    // the address of a TCP listener
	landlockUDPEnv    = "CODEMODE_LANDLOCK_UDP"    // the address of a UDP socket
	landlockUnixEnv   = "CODEMODE_LANDLOCK_UNIX"   // the name of an abstract unix socket
	landlockFDEnv     = "CODEMODE_LANDLOCK_FD"     // the number of one of its file descriptors
	landlockMemoryEnv = "CODEMODE_LANDLOCK_MEMORY" // address:hex of bytes in its memory
)

// landlockChild is what the child knows of itself and its parent.
type landlockChild struct {
	confined bool
	attr     landlockRulesetAttr // what the domain handles
	seccomp  bool                // restrictSyscalls' filter is installed too

	parent   int
	parentFD int
	memAddr  uintptr
	memText  []byte

	preDomainThreads []int   // threads made before the domain, held until the checks end
	preDomainMemory  []error // what opening the parent's memory gave on each after it
	zoneBefore       error   // what loading a time zone gave before the domain
}

// refuses says whether the child refuses e: with its seccomp filter for
// what Landlock lets through; else when its domain handles all of e's
// rights, or, for an escape with none, when it has a domain at all, whose
// ptrace scoping every Landlock version enforces.
func (c *landlockChild) refuses(e landlockEscape) bool {
	if e.seccompOnly {
		return c.seccomp
	}
	return c.confined && c.attr.HandledFS&e.fs == e.fs && c.attr.HandledNet&e.net == e.net && c.attr.Scoped&e.scoped == e.scoped
}

func (c *landlockChild) proc(file string) string {
	return "/proc/" + strconv.Itoa(c.parent) + "/" + file
}

// landlockEscape is something a worker must not do. The domain refuses it
// with errno once it handles fs, net and scoped (all zero: the domain's
// ptrace scoping); one marked seccompOnly, Landlock lets through and only
// the seccomp filter refuses. Otherwise it succeeds, which shows its check
// would catch the loss of what refuses it.
type landlockEscape struct {
	name            string
	fs, net, scoped uint64
	seccompOnly     bool
	errno           unix.Errno
	try             func(c *landlockChild) error
}

// errUnavailable is what an escape the kernel cannot even try returns.
var errUnavailable = errors.New("not available on this kernel")

// landlockEscapeNamed is the escape of landlockEscapes named name.
func landlockEscapeNamed(name string) landlockEscape {
	i := slices.IndexFunc(landlockEscapes, func(e landlockEscape) bool { return e.name == name })
	return landlockEscapes[i]
}

var landlockEscapes = []landlockEscape{
	// Caddy's memory, environment and file descriptors. Caddy holds the
	// credentials and the network: writing its memory would be running
	// code in it.
	{"open_parent_memory_for_writing", 0, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return openAndClose(c.proc("mem"), os.O_RDWR)
	}},
	{"open_parent_memory_for_reading", 0, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return openAndClose(c.proc("mem"), os.O_RDONLY)
	}},
	// The domain refuses these two to a child holding no capability; a
	// root one with CAP_PERFMON or CAP_SYS_ADMIN reads them through it,
	// so confineProcess drops every capability.
	{"read_parent_environment", 0, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		env, err := os.ReadFile(c.proc("environ"))
		if err == nil && len(env) == 0 {
			return errors.New("read an empty environment")
		}
		return err
	}},
	{"read_parent_memory_map", 0, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		_, err := os.ReadFile(c.proc("maps"))
		return err
	}},
	{"read_parent_memory", 0, 0, 0, false, unix.EPERM, func(c *landlockChild) error {
		got := make([]byte, len(c.memText))
		_, err := unix.ProcessVMReadv(c.parent,
			[]unix.Iovec{{Base: &got[0], Len: uint64(len(got))}},
			[]unix.RemoteIovec{{Base: c.memAddr, Len: len(got)}}, 0)
		if err == nil && !bytes.Equal(got, c.memText) {
			return fmt.Errorf("read %x from the parent, want %x", got, c.memText)
		}
		return err
	}},
	{"take_a_parent_file_descriptor", 0, 0, 0, false, unix.EPERM, func(c *landlockChild) error {
		pidfd, err := unix.PidfdOpen(c.parent, 0)
		if err != nil {
			return fmt.Errorf("pidfd_open: %w", err)
		}
		defer unix.Close(pidfd)
		fd, err := unix.PidfdGetfd(pidfd, c.parentFD, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}},
	{"resolve_a_parent_file_descriptor", 0, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		_, err := os.Readlink(c.proc("fd/" + strconv.Itoa(c.parentFD)))
		return err
	}},

	// Signals. Signal 0 only probes; SIGWINCH is ignored unless a process
	// asks for it, as the parent test does to see whether it came.
	{"probe_parent_with_signal_0", 0, 0, unix.LANDLOCK_SCOPE_SIGNAL, false, unix.EPERM, func(c *landlockChild) error {
		return unix.Kill(c.parent, 0)
	}},
	{"signal_parent", 0, 0, unix.LANDLOCK_SCOPE_SIGNAL, false, unix.EPERM, func(c *landlockChild) error {
		return unix.Kill(c.parent, unix.SIGWINCH)
	}},
	{"signal_a_parent_thread", 0, 0, unix.LANDLOCK_SCOPE_SIGNAL, false, unix.EPERM, func(c *landlockChild) error {
		return unix.Tgkill(c.parent, c.parent, unix.SIGWINCH)
	}},
	{"signal_parent_through_a_pidfd", 0, 0, unix.LANDLOCK_SCOPE_SIGNAL, false, unix.EPERM, func(c *landlockChild) error {
		pidfd, err := unix.PidfdOpen(c.parent, 0)
		if err != nil {
			return fmt.Errorf("pidfd_open: %w", err)
		}
		defer unix.Close(pidfd)
		return unix.PidfdSendSignal(pidfd, unix.SIGWINCH, nil, 0)
	}},

	// Sockets.
	{"connect_to_parent_tcp", 0, unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, 0, false, unix.EACCES, func(c *landlockChild) error {
		conn, err := net.Dial("tcp", os.Getenv(landlockTCPEnv))
		if err == nil {
			conn.Close()
		}
		return err
	}},
	{"listen_on_tcp", 0, unix.LANDLOCK_ACCESS_NET_BIND_TCP, 0, false, unix.EACCES, func(c *landlockChild) error {
		// net.Listen would make an MPTCP socket, which the domain lets bind.
		var lc net.ListenConfig
		lc.SetMultipathTCP(false)
		ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err == nil {
			ln.Close()
		}
		return err
	}},
	// Landlock's network rights are TCP's alone: MPTCP, which falls back to
	// TCP with a plain TCP listener, and UDP go through a domain.
	{"connect_to_parent_over_mptcp", 0, 0, 0, true, unix.EPERM, func(c *landlockChild) error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP)
		if errors.Is(err, unix.EPROTONOSUPPORT) {
			return errUnavailable
		}
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		addr, err := netip.ParseAddrPort(os.Getenv(landlockTCPEnv))
		if err != nil {
			return err
		}
		return unix.Connect(fd, &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()})
	}},
	{"send_udp_to_parent", 0, 0, 0, true, unix.EPERM, func(c *landlockChild) error {
		conn, err := net.Dial("udp", os.Getenv(landlockUDPEnv))
		if err != nil {
			return err
		}
		defer conn.Close()
		_, err = conn.Write([]byte("from the child"))
		return err
	}},
	{"connect_to_parent_abstract_socket", 0, 0, unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET, false, unix.EPERM, func(c *landlockChild) error {
		conn, err := net.Dial("unix", os.Getenv(landlockUnixEnv))
		if err == nil {
			conn.Close()
		}
		return err
	}},

	// Files, in the child's working directory (a temporary one), made
	// before the domain.
	{"create_file", unix.LANDLOCK_ACCESS_FS_MAKE_REG, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return os.WriteFile("created", []byte("x"), 0o600)
	}},
	{"write_file", unix.LANDLOCK_ACCESS_FS_WRITE_FILE, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return openAndClose("write-me", os.O_WRONLY)
	}},
	{"truncate_file", unix.LANDLOCK_ACCESS_FS_TRUNCATE, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return unix.Truncate("truncate-me", 0)
	}},
	{"remove_file", unix.LANDLOCK_ACCESS_FS_REMOVE_FILE, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return os.Remove("remove-me")
	}},
	{"rename_file", unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_REG, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return os.Rename("rename-me", "renamed")
	}},
	{"link_file", unix.LANDLOCK_ACCESS_FS_MAKE_REG, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return os.Link("read-me", "linked")
	}},
	{"make_symlink", unix.LANDLOCK_ACCESS_FS_MAKE_SYM, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return os.Symlink("read-me", "symlinked")
	}},
	{"make_fifo", unix.LANDLOCK_ACCESS_FS_MAKE_FIFO, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return unix.Mkfifo("fifo", 0o600)
	}},
	{"make_directory", unix.LANDLOCK_ACCESS_FS_MAKE_DIR, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return os.Mkdir("made.d", 0o700)
	}},
	{"remove_directory", unix.LANDLOCK_ACCESS_FS_REMOVE_DIR, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return os.Remove(landlockRemoveDir)
	}},
	{"run_a_program", unix.LANDLOCK_ACCESS_FS_EXECUTE, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		return exec.Command("/bin/true").Run()
	}},
	{"device_ioctl", unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, 0, 0, false, unix.EACCES, func(c *landlockChild) error {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return err
		}
		defer f.Close()
		// /dev/null is no terminal: ENOTTY is the device's own answer.
		_, err = unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		if errors.Is(err, unix.ENOTTY) {
			return nil
		}
		return err
	}},
}

// landlockChecks run in a confined child after landlockEscapes; the
// parent requires each to pass.
var landlockChecks = []struct {
	name  string
	check func(t *testing.T, c *landlockChild)
}{
	{"threads_from_before_the_domain_are_confined", func(t *testing.T, c *landlockChild) {
		for i, err := range c.preDomainMemory {
			if !errors.Is(err, unix.EACCES) {
				t.Errorf("opening the parent's memory on thread %d, made before the domain: %v, want EACCES", c.preDomainThreads[i], err)
			}
		}
	}},
	{"threads_made_after_are_confined", func(t *testing.T, c *landlockChild) {
		tids, tryAll, release := lockedThreads(16, c.openParentMemory)
		defer release()
		if !slices.ContainsFunc(tids, func(tid int) bool { return !slices.Contains(c.preDomainThreads, tid) }) {
			t.Errorf("no thread was made after the domain: %v", tids)
		}
		for i, err := range tryAll() {
			if !errors.Is(err, unix.EACCES) {
				t.Errorf("opening the parent's memory on thread %d: %v, want EACCES", tids[i], err)
			}
		}
	}},
	{"every_thread_has_no_new_privs_and_no_capability", func(t *testing.T, c *landlockChild) {
		requireThreadStatus(t, "\nCapInh:\t0000000000000000\n", "\nCapPrm:\t0000000000000000\n",
			"\nCapEff:\t0000000000000000\n", "\nNoNewPrivs:\t1\n")
	}},
	{"execve_refused", func(t *testing.T, c *landlockChild) {
		// Were it let through, /bin/true would replace this process and
		// the parent would miss the checks' results.
		err := syscall.Exec("/bin/true", []string{"true"}, nil)
		if !errors.Is(err, unix.EACCES) && !(c.seccomp && errors.Is(err, unix.EPERM)) {
			t.Errorf("execve /bin/true: %v, want EACCES", err)
		}
	}},
	{"reading_files_works", func(t *testing.T, c *landlockChild) {
		if got, err := os.ReadFile("read-me"); err != nil || string(got) != landlockReadText {
			t.Errorf("reading a file: %q, %v", got, err)
		}
		if _, err := os.ReadDir("."); err != nil {
			t.Errorf("reading a directory: %v", err)
		}
		exe, err := os.Open(os.Args[0])
		if err != nil {
			t.Fatalf("opening the test binary: %v", err)
		}
		defer exe.Close()
		magic := make([]byte, 4)
		if _, err := exe.Read(magic); err != nil || string(magic) != "\x7fELF" {
			t.Errorf("reading the test binary: %q, %v", magic, err)
		}
		if _, err := os.ReadFile("/proc/self/statm"); err != nil {
			t.Errorf("reading the child's own statm: %v", err)
		}
	}},
	{"time_zones_load", func(t *testing.T, c *landlockChild) {
		if err := loadTimeZone(); (err == nil) != (c.zoneBefore == nil) {
			t.Errorf("loading a time zone: %v, before the domain: %v", err, c.zoneBefore)
		}
	}},
	{"stdin_pipe_works", func(t *testing.T, c *landlockChild) {
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil || line != landlockStdin+"\n" {
			t.Errorf("reading stdin: %q, %v", line, err)
		}
	}},
	{"gc_and_a_100mb_allocation_work", func(t *testing.T, c *landlockChild) {
		allocateAndCollect()
	}},
}

func (c *landlockChild) openParentMemory() error {
	return openAndClose(c.proc("mem"), os.O_RDWR)
}

func openAndClose(path string, flag int) error {
	f, err := os.OpenFile(path, flag, 0)
	if err == nil {
		f.Close()
	}
	return err
}

func loadTimeZone() error {
	_, err := time.LoadLocation("Europe/Paris")
	return err
}

// prepareLandlockChild reads what the parent gave and makes, in the
// working directory, the files landlockEscapes work on.
func prepareLandlockChild(t *testing.T) *landlockChild {
	c := &landlockChild{parent: os.Getppid()}
	var err error
	if c.parentFD, err = strconv.Atoi(os.Getenv(landlockFDEnv)); err != nil {
		t.Fatalf("%s: %v", landlockFDEnv, err)
	}
	addr, text, _ := strings.Cut(os.Getenv(landlockMemoryEnv), ":")
	a, err := strconv.ParseUint(addr, 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", landlockMemoryEnv, err)
	}
	c.memAddr = uintptr(a)
	if c.memText, err = hex.DecodeString(text); err != nil || len(c.memText) == 0 {
		t.Fatalf("%s: %q, %v", landlockMemoryEnv, text, err)
	}
	for _, name := range []string{"read-me", "write-me", "truncate-me", "remove-me", "rename-me"} {
		if err := os.WriteFile(name, []byte(landlockReadText), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(landlockRemoveDir, 0o700); err != nil {
		t.Fatal(err)
	}
	c.zoneBefore = loadTimeZone()
	return c
}

func TestLandlockChild(t *testing.T) {
	mode := os.Getenv(landlockChildEnv)
	switch mode {
	case "":
		t.Skip("runs only in the child process the landlock tests start")
	case landlockBench:
		benchLandlockChild(t)
		return
	}
	abi, errata, err := landlockVersion()
	if err != nil {
		t.Fatal(err)
	}
	c := prepareLandlockChild(t)
	var tryAll func() []error
	var release func()
	c.preDomainThreads, tryAll, release = lockedThreads(8, c.openParentMemory)
	defer release()

	switch {
	case mode == landlockUnconfined:
	case mode == landlockWithCgo:
		// A binary with cgo on a kernel before TSYNC: nothing is
		// confined, and the error says why.
		if err := confineProcess(); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
			t.Fatalf("confineProcess: %v, want an error saying it needs a build without cgo", err)
		}
	case mode == landlockConfined || mode == landlockThenSeccomp || mode == landlockAfterSeccomp:
		c.confined = true
		c.seccomp = mode != landlockConfined
		if mode == landlockAfterSeccomp {
			// The filter lets the Landlock calls, and those
			// AllThreadsSyscall makes, through.
			if err := restrictSyscalls(); err != nil {
				t.Fatalf("restrictSyscalls: %v", err)
			}
		}
		var unenforced []string
		c.attr, unenforced = landlockRuleset(abi, errata)
		requireUnenforced(t, confineProcess(), abi, unenforced)
		if mode == landlockThenSeccomp {
			if err := restrictSyscalls(); err != nil {
				t.Fatalf("restrictSyscalls after confineProcess: %v", err)
			}
		}
	case strings.HasPrefix(mode, landlockAsABI):
		as, err := strconv.Atoi(strings.TrimPrefix(mode, landlockAsABI))
		if err != nil || as < 1 || as > abi {
			t.Fatalf("mode %q: the kernel has abi %d", mode, abi)
		}
		c.confined = true
		var unenforced []string
		c.attr, unenforced = landlockRuleset(as, errata)
		requireUnenforced(t, confineProcessAs(as, errata), as, unenforced)
	default:
		t.Fatalf("unknown %s %q", landlockChildEnv, mode)
	}
	c.preDomainMemory = tryAll()

	for _, e := range landlockEscapes {
		t.Run(e.name, func(t *testing.T) {
			err := e.try(c)
			switch {
			case errors.Is(err, errUnavailable):
				t.Skip(err)
			case !c.refuses(e):
				if err != nil {
					t.Errorf("without the domain's right: %v, want it done", err)
				}
			case errors.Is(err, e.errno):
			case c.seccomp && errors.Is(err, unix.EPERM):
				// The seccomp filter refused it first.
			default:
				t.Errorf("%v, want %v", err, e.errno)
			}
		})
	}
	if !c.confined {
		return
	}
	for _, check := range landlockChecks {
		t.Run(check.name, func(t *testing.T) { check.check(t, c) })
	}
}

// requireUnenforced fails t unless err says "not enforced" for each of
// unenforced, or is nil when unenforced is empty.
func requireUnenforced(t *testing.T, err error, abi int, unenforced []string) {
	t.Helper()
	if len(unenforced) == 0 {
		if err != nil {
			t.Fatalf("confining with abi %d: %v", abi, err)
		}
		return
	}
	if err == nil {
		t.Fatalf("confining with abi %d: no error, want one listing %q", abi, unenforced)
	}
	for _, u := range unenforced {
		if !strings.Contains(err.Error(), u) {
			t.Errorf("confining with abi %d: %q does not list %q", abi, err, u)
		}
	}
}

// benchLandlockChild prints confineProcess's time and that of opening and
// closing a file before and after it.
func benchLandlockChild(t *testing.T) {
	if err := os.WriteFile("read-me", []byte(landlockReadText), 0o600); err != nil {
		t.Fatal(err)
	}
	const opens = 20_000
	before := timeOpen(t, opens)
	start := time.Now()
	err := confineProcess()
	install := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	after := timeOpen(t, opens)
	fmt.Printf("landlock install_ns=%d open_ns_before=%.1f open_ns_after=%.1f\n", install.Nanoseconds(), before, after)
}

// timeOpen is the mean time of opening and closing a file for reading.
func timeOpen(t *testing.T, opens int) float64 {
	start := time.Now()
	for range opens {
		if err := openAndClose("read-me", os.O_RDONLY); err != nil {
			t.Fatal(err)
		}
	}
	return float64(time.Since(start).Nanoseconds()) / float64(opens)
}

// landlockChildBinary is a test binary whose confineProcess can confine
// every thread: this one, or, when it uses cgo on a kernel before TSYNC
// (where AllThreadsSyscall is unavailable), a copy built without cgo.
func landlockChildBinary(tb testing.TB, abi int) string {
	tb.Helper()
	if abi >= landlockABITSync || !builtWithCgo() {
		return os.Args[0]
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		tb.Skipf("this test binary uses cgo and there is no go command to build one without: %v", err)
	}
	bin := filepath.Join(tb.TempDir(), "codemode.test")
	cmd := exec.CommandContext(tb.Context(), goTool, "test", "-c", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("building the test binary without cgo: %v\n%s", err, out)
	}
	return bin
}

func builtWithCgo() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return true
	}
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" {
			return s.Value == "1"
		}
	}
	return false
}

// landlockMode is a way TestConfineProcess runs the child.
type landlockMode struct {
	name     string
	bin      string
	confined bool
	attr     landlockRulesetAttr
}

func TestConfineProcess(t *testing.T) {
	abi, errata, err := landlockVersion()
	if err != nil {
		t.Skip(err)
	}
	bin := landlockChildBinary(t, abi)
	full, _ := landlockRuleset(abi, errata)
	modes := []landlockMode{
		{landlockUnconfined, bin, false, landlockRulesetAttr{}},
		{landlockConfined, bin, true, full},
		{landlockThenSeccomp, bin, true, full},
		{landlockAfterSeccomp, bin, true, full},
	}
	for as := 1; as < abi; as++ {
		attr, _ := landlockRuleset(as, errata)
		modes = append(modes, landlockMode{landlockAsABI + strconv.Itoa(as), bin, true, attr})
	}
	if bin != os.Args[0] {
		modes = append(modes, landlockMode{landlockWithCgo, os.Args[0], false, landlockRulesetAttr{}})
	}

	// What the child tries to reach.
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	var tcpFD int
	raw, err := tcp.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	raw.Control(func(fd uintptr) { tcpFD = int(fd) })
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	mptcp := mptcpAvailable()
	abstract, err := net.Listen("unix", "@codemode-landlock-test-"+rand.Text())
	if err != nil {
		t.Fatal(err)
	}
	defer abstract.Close()
	memText := []byte(rand.Text())
	defer runtime.KeepAlive(memText)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGWINCH)
	defer signal.Stop(signals)

	env := []string{
		landlockTCPEnv + "=" + tcp.Addr().String(),
		landlockUDPEnv + "=" + udp.LocalAddr().String(),
		landlockUnixEnv + "=" + abstract.Addr().String(),
		landlockFDEnv + "=" + strconv.Itoa(tcpFD),
		fmt.Sprintf("%s=%d:%x", landlockMemoryEnv, uintptr(unsafe.Pointer(&memText[0])), memText),
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			out, err := runChildTest(t, mode.bin, "TestLandlockChild", landlockStdin+"\n", append(env, landlockChildEnv+"="+mode.name)...)
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			c := &landlockChild{confined: mode.confined, attr: mode.attr, seccomp: mode.name == landlockThenSeccomp || mode.name == landlockAfterSeccomp}
			for _, e := range landlockEscapes {
				done := "--- PASS: TestLandlockChild/" + e.name + " "
				if e.name == "connect_to_parent_over_mptcp" && !mptcp {
					done = "--- SKIP: TestLandlockChild/" + e.name + " "
				}
				if !strings.Contains(out, done) {
					t.Errorf("the child did not pass %s", e.name)
				}
			}
			if mode.confined {
				for _, check := range landlockChecks {
					if !strings.Contains(out, "--- PASS: TestLandlockChild/"+check.name+" ") {
						t.Errorf("the child did not pass %s", check.name)
					}
				}
			}

			// What reached the parent: what the domain refused must not
			// have, and what it let through must have.
			signalled := !c.refuses(landlockEscapeNamed("signal_parent"))
			if got := arrived(signals, signalled); got != signalled {
				t.Errorf("SIGWINCH from the child reached the parent: %v, want %v", got, signalled)
			}
			connected := !c.refuses(landlockEscapeNamed("connect_to_parent_tcp")) ||
				mptcp && !c.refuses(landlockEscapeNamed("connect_to_parent_over_mptcp"))
			if got := accepted(t, tcp.(*net.TCPListener), connected); got != connected {
				t.Errorf("a tcp connection from the child reached the parent: %v, want %v", got, connected)
			}
			connected = !c.refuses(landlockEscapeNamed("connect_to_parent_abstract_socket"))
			if got := accepted(t, abstract.(*net.UnixListener), connected); got != connected {
				t.Errorf("an abstract socket connection from the child reached the parent: %v, want %v", got, connected)
			}
			sent := !c.refuses(landlockEscapeNamed("send_udp_to_parent"))
			if got := received(udp, sent); got != sent {
				t.Errorf("a udp datagram from the child reached the parent: %v, want %v", got, sent)
			}
			if t.Failed() {
				t.Logf("child output:\n%s", out)
			}
		})
	}
}

// arrived says whether a signal came on signals, waiting longer for one
// that should have, and takes every one that comes.
func arrived(signals <-chan os.Signal, expected bool) bool {
	wait := 100 * time.Millisecond
	if expected {
		wait = 10 * time.Second
	}
	got := false
	for {
		select {
		case <-signals:
			got = true
			wait = 100 * time.Millisecond
		case <-time.After(wait):
			return got
		}
	}
}

// accepted says whether a connection waits on ln, waiting longer for one
// that should, and accepts and closes every waiting one.
func accepted(t *testing.T, ln interface {
	SetDeadline(time.Time) error
	Accept() (net.Conn, error)
}, expected bool) bool {
	t.Helper()
	wait := 50 * time.Millisecond
	if expected {
		wait = 10 * time.Second
	}
	got := false
	for {
		ln.SetDeadline(time.Now().Add(wait))
		conn, err := ln.Accept()
		if err != nil {
			return got
		}
		conn.Close()
		got = true
		wait = 50 * time.Millisecond
	}
}

// received says whether a datagram came on conn, waiting longer for one
// that should have, and reads every waiting one.
func received(conn net.PacketConn, expected bool) bool {
	wait := 50 * time.Millisecond
	if expected {
		wait = 10 * time.Second
	}
	got := false
	buf := make([]byte, 64)
	for {
		conn.SetReadDeadline(time.Now().Add(wait))
		if _, _, err := conn.ReadFrom(buf); err != nil {
			return got
		}
		got = true
		wait = 50 * time.Millisecond
	}
}

// mptcpAvailable says whether the kernel makes MPTCP sockets.
func mptcpAvailable() bool {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP)
	if err == nil {
		unix.Close(fd)
	}
	return err == nil
}

func TestLandlockRuleset(t *testing.T) {
	const (
		v1      = landlockWrites
		refer   = unix.LANDLOCK_ACCESS_FS_REFER
		trunc   = unix.LANDLOCK_ACCESS_FS_TRUNCATE
		ioctl   = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
		tcp     = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		sockets = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		signals = unix.LANDLOCK_SCOPE_SIGNAL
	)
	noSignalFix := "signals to processes outside the worker (the kernel lacks landlock erratum 2)"
	for _, c := range []struct {
		abi        int
		errata     uint64
		want       landlockRulesetAttr
		unenforced []string
	}{
		{1, 0, landlockRulesetAttr{HandledFS: v1}, []string{"truncating", "tcp", "device ioctls", "abstract unix sockets", "signals"}},
		{2, 0, landlockRulesetAttr{HandledFS: v1 | refer}, []string{"truncating", "tcp", "device ioctls", "abstract unix sockets", "signals"}},
		{3, 0, landlockRulesetAttr{HandledFS: v1 | refer | trunc}, []string{"tcp", "device ioctls", "abstract unix sockets", "signals"}},
		{4, 0, landlockRulesetAttr{HandledFS: v1 | refer | trunc, HandledNet: tcp}, []string{"device ioctls", "abstract unix sockets", "signals"}},
		{5, 0, landlockRulesetAttr{HandledFS: v1 | refer | trunc | ioctl, HandledNet: tcp}, []string{"abstract unix sockets", "signals"}},
		{6, 0, landlockRulesetAttr{HandledFS: v1 | refer | trunc | ioctl, HandledNet: tcp, Scoped: sockets}, []string{noSignalFix}},
		{6, landlockErratumSignals, landlockRulesetAttr{HandledFS: v1 | refer | trunc | ioctl, HandledNet: tcp, Scoped: sockets | signals}, nil},
		{7, 0b111, landlockRulesetAttr{HandledFS: v1 | refer | trunc | ioctl, HandledNet: tcp, Scoped: sockets | signals}, nil},
		{8, 0b101, landlockRulesetAttr{HandledFS: v1 | refer | trunc | ioctl, HandledNet: tcp, Scoped: sockets}, []string{noSignalFix}},
		{9, 0b111, landlockRulesetAttr{HandledFS: v1 | refer | trunc | ioctl, HandledNet: tcp, Scoped: sockets | signals}, nil},
	} {
		got, unenforced := landlockRuleset(c.abi, c.errata)
		if got != c.want {
			t.Errorf("abi %d, errata %b: %+v, want %+v", c.abi, c.errata, got, c.want)
		}
		if len(unenforced) != len(c.unenforced) {
			t.Errorf("abi %d, errata %b: unenforced %q, want %q", c.abi, c.errata, unenforced, c.unenforced)
			continue
		}
		for i, u := range c.unenforced {
			if !strings.HasPrefix(unenforced[i], u) {
				t.Errorf("abi %d, errata %b: unenforced %q, want %q", c.abi, c.errata, unenforced, c.unenforced)
			}
		}
	}
	// Reading stays allowed at every version.
	for abi := 1; abi <= 9; abi++ {
		got, _ := landlockRuleset(abi, 0b111)
		if got.HandledFS&(unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_READ_DIR) != 0 {
			t.Errorf("abi %d: the ruleset handles reading: %#x", abi, got.HandledFS)
		}
	}
}

// BenchmarkConfineProcess starts a child per iteration that confines
// itself and times it, and opening a file before and after; ns/op is
// mostly the child's start.
func BenchmarkConfineProcess(b *testing.B) {
	abi, _, err := landlockVersion()
	if err != nil {
		b.Skip(err)
	}
	bin := landlockChildBinary(b, abi)
	benchInstall(b, "landlock", "open", func() (string, error) {
		return runChildTest(b, bin, "TestLandlockChild", "", landlockChildEnv+"="+landlockBench)
	})
}
