package main

import (
	"os/exec"
	"testing"
	"time"
)

// TestThreadsCPU: a process that keeps a core busy shows the CPU time it
// used, to the nanosecond, as the ticks of server.cpu do coarsely.
func TestThreadsCPU(t *testing.T) {
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sh: %v", err)
	}
	s := &server{name: "spin", cmd: cmd}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for s.cpu() < 200*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("the spinning process used %s of CPU in 30 s", s.cpu())
		}
		time.Sleep(20 * time.Millisecond)
	}
	got := threadsCPU(s)
	if got < 150*time.Millisecond {
		t.Errorf("threadsCPU %s, though the ticks say %s", got, s.cpu())
	}
	if later := threadsCPU(s); later < got {
		t.Errorf("threadsCPU went back from %s to %s", got, later)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if after := threadsCPU(s); after != 0 {
		t.Errorf("threadsCPU of an ended process is %s, want 0", after)
	}
}

// TestBindingMeasured: the target shows the CPU overhead only when it was
// measured.
func TestBindingMeasured(t *testing.T) {
	b := &BindingOverhead{BindingCall: 300 * us, DirectCall: 290 * us, Overheads: []float64{float64(10 * us)}}
	if got, want := b.measured(), "+10 µs (+10..+10 µs, 1 round; 300 µs vs 290 µs a call)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	b.CPUOverheads = []float64{float64(4 * us), float64(6 * us), float64(5 * us)}
	if got, want := b.measured(), "+10 µs (+10..+10 µs, 1 round; 300 µs vs 290 µs a call); Caddy's CPU +5 µs (+4..+6 µs, 3 rounds)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
