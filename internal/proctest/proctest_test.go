package proctest

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

func TestParseOddNames(t *testing.T) {
	s, ok := parse("4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 33 4 0 0 20 0 1 0 1 0 0\n")
	if !ok || s.Pid != 4242 || s.State != "S" || s.Parent != 17 || s.UserTicks != 33 {
		t.Fatalf("parsed %+v, %v", s, ok)
	}
	if _, ok := parse("garbage"); ok {
		t.Fatal("garbage parsed")
	}
}

func TestChildrenAndRunning(t *testing.T) {
	if !Available() {
		t.Skip("no /proc here")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start sleep:", err)
	}
	pid := cmd.Process.Pid
	if kids := Children(os.Getpid()); !slices.Contains(kids, pid) {
		t.Fatalf("children %v lack %d", kids, pid)
	}
	if !Running(pid) {
		t.Fatal("a sleeping child is not running")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if Running(pid) || slices.Contains(Children(os.Getpid()), pid) {
		t.Fatal("a reaped child still counts")
	}
}
