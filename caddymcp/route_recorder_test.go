package caddymcp

import (
	"bytes"
	"errors"
	"strconv"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// The recorder makes room for a declared length on the first write, so an
// answer copied in chunks stays in the allocation made for it; a length it
// does not trust (over the limit, over upstream.ExactReadMax, missing or
// not a number) reserves nothing ahead of the bytes. Whatever it reserves,
// it keeps every byte written within the limit and refuses the rest.
func TestRecorderDeclaredLength(t *testing.T) {
	t.Parallel()
	chunk := bytes.Repeat([]byte("x"), 16<<10)
	cases := []struct {
		name     string
		declared string
		limit    int64
		writes   int
		reserved bool // the first write made room for the whole body
		overflow bool
	}{
		{"declared within the limit", "49152", 1 << 20, 3, true, false},
		{"declared smaller than what arrives", "16384", 1 << 20, 3, false, false},
		{"declared over the limit", "49152", 40 << 10, 3, false, true},
		{"declared over the read-ahead bound", strconv.Itoa(upstream.ExactReadMax + 1), 1 << 20, 3, false, false},
		{"no declared length", "", 1 << 20, 3, false, false},
		{"a declared length that is not a number", "48k", 1 << 20, 3, false, false},
		{"a negative declared length", "-1", 1 << 20, 3, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := newRecorder(c.limit)
			if c.declared != "" {
				rec.Header().Set("Content-Length", c.declared)
			}
			var first *byte
			var err error
			written := 0
			for i := range c.writes {
				var n int
				n, err = rec.Write(chunk)
				written += n
				if err != nil {
					break
				}
				if i == 0 {
					first = &rec.body.Bytes()[0]
				}
			}
			same := first == &rec.body.Bytes()[0]
			if same != c.reserved {
				t.Errorf("the body stayed in its first allocation: %v, want %v (capacity %d)", same, c.reserved, rec.body.Cap())
			}
			var tooLarge *upstream.TooLargeError
			if got := errors.As(err, &tooLarge); got != c.overflow || rec.overflow != c.overflow {
				t.Fatalf("write error %v, overflow %v; want overflow %v", err, rec.overflow, c.overflow)
			}
			if rec.body.Len() != written || !bytes.Equal(rec.body.Bytes(), bytes.Repeat([]byte("x"), written)) {
				t.Errorf("the body holds %d bytes, %d were accepted", rec.body.Len(), written)
			}
			if int64(rec.body.Len()) > c.limit {
				t.Errorf("the body holds %d bytes, over the limit %d", rec.body.Len(), c.limit)
			}
			if rec.resp.Status != 200 {
				t.Errorf("status %d after writes without WriteHeader, want 200", rec.resp.Status)
			}
		})
	}
}

// The answer a recorder builds carries the status first set, the headers
// and the body written.
func TestRecorderAnswer(t *testing.T) {
	t.Parallel()
	rec := newRecorder(1 << 10)
	rec.WriteHeader(103) // informational: changes nothing
	rec.Header().Set("Content-Type", "application/json")
	rec.WriteHeader(201)
	rec.WriteHeader(500) // repeated: changes nothing
	if _, err := rec.Write([]byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	rec.resp.Body = rec.body.Bytes()
	if rec.resp.Status != 201 || rec.resp.Header.Get("Content-Type") != "application/json" || string(rec.resp.Body) != `{"ok":true}` {
		t.Errorf("answer %d %v %q", rec.resp.Status, rec.resp.Header, rec.resp.Body)
	}
}
