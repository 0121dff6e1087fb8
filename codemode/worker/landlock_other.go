//go:build !linux

package worker

// processConfinement says, for a worker's log, what confineProcess
// enforces on this system.
const processConfinement = "none on this system"

// confineProcess confines nothing here: Landlock is Linux's. On macOS, the
// BSDs and Windows a worker can write files and reach other processes of
// its user like any process of that user.
func confineProcess() error { return nil }
