// Package worker runs each execution in a worker process that the kernel
// confines, from a pool the parent keeps warm, and is that process's side
// of the pipe too.
package worker
