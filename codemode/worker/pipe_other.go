//go:build !unix

package worker

import (
	"io"
	"os"
)

// pipeReader reads one end of a pipe between Caddy and a worker; polling
// for an expected answer (see pipe_unix.go) is Unix only.
type pipeReader struct{ r io.Reader }

func newPipeReader(r io.Reader) *pipeReader { return &pipeReader{r: r} }

func pollable(f *os.File) *os.File { return f }

func (p *pipeReader) expect() {}

func (p *pipeReader) Read(b []byte) (int, error) { return p.r.Read(b) }
