//go:build unix

package worker

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"
)

// A read that sleeps on the pipe when expect wakes it polls and goes on
// reading: no error reaches the reader, every byte arrives in order, the
// end of the pipe is an io.EOF. (A worker reads its standard input,
// made pollable, through one: every process test runs it.)
func TestPipeReaderWokenByExpect(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := newPipeReader(r)
	if p.rc == nil {
		t.Fatal("a pipe of os.Pipe is not polled")
	}
	got := make(chan []byte, 1)
	go func() {
		all, err := io.ReadAll(p)
		if err != nil {
			t.Errorf("reading: %v", err)
		}
		got <- all
	}()
	var want bytes.Buffer
	for i := 0; i < 200; i++ {
		p.expect()
		if i%20 == 0 {
			time.Sleep(2 * time.Millisecond) // past the polling: the read sleeps, then is woken
			p.expect()
		}
		chunk := bytes.Repeat([]byte{byte(i)}, 1+i*37%5000)
		want.Write(chunk)
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	select {
	case all := <-got:
		if !bytes.Equal(all, want.Bytes()) {
			t.Fatalf("read %d bytes, want the %d written", len(all), want.Len())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not end when the pipe closed")
	}
}
