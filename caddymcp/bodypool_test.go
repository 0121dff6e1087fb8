package caddymcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPooledBuffersKeepNothingOfAnEarlierCall answers a short call, a long
// one and the short one again on one goroutine, where the pools hand the
// long call's buffers (body, envelope, answer) to the second short call:
// its answer is the first's, byte for byte, in both eras.
func TestPooledBuffersKeepNothingOfAnEarlierCall(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path, "query": r.URL.RawQuery})
	}))
	defer api.Close()
	h := &Handler{
		Upstream: api.URL,
		Tools: []*Tool{{Name: "get_item", Description: "Get an item.", Method: "GET", Path: "/items/{id}",
			Args: []*Arg{{Name: "id", Type: "string", Required: true}, {Name: "note", Type: "string"}}}},
	}
	defer provisionBench(t, h)()

	long := strings.Repeat("x", 1400)
	for _, c := range []struct {
		header map[string]string
		meta   string
	}{
		{map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, ""},
		{map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_item"},
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`},
	} {
		call := func(id, args string) string {
			body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"get_item","arguments":{` + args + `}` + c.meta + `}}`
			if len(body) > pooledBodyMax {
				t.Fatalf("a body of %d bytes is not pooled", len(body))
			}
			w := servePost(t, h, body, c.header)
			if w.Code != http.StatusOK {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			return w.Body.String()
		}
		answered := h.fast.answers.Load()
		short := `"id":"a"`
		first := call("1", short)
		if !strings.Contains(first, `\"path\":\"/items/a\",\"query\":\"\"`) {
			t.Fatalf("unexpected answer %s", first)
		}
		if got := call(`"`+long+`"`, `"id":"`+long+`","note":"`+long[:900]+`"`); !strings.Contains(got, long) || !strings.Contains(got, "note=x") {
			t.Fatalf("the long call's answer lacks its id, item or note: %.200s", got)
		}
		if again := call("1", short); again != first {
			t.Errorf("the short call answered\n%s\nafter the long one, and before it\n%s", again, first)
		}
		if n := h.fast.answers.Load() - answered; n != 3 {
			t.Errorf("the fast path answered %d calls of 3", n)
		}
	}
}

func TestReadPooledBody(t *testing.T) {
	read := func(body string, length int64, limit int64) ([]byte, *[]byte, error) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", io.NopCloser(strings.NewReader(body)))
		r.ContentLength = length
		return readPooledBody(httptest.NewRecorder(), r, limit)
	}
	long := strings.Repeat("y", 3000)
	body, buf, err := read(long, 3000, 1<<20)
	if err != nil || buf == nil || string(body) != long {
		t.Fatalf("pooled read of 3000 bytes: %v %v", buf != nil, err)
	}
	releaseBody(buf)
	if body, buf, err = read(`{"a":1}`, 7, 1<<20); err != nil || buf == nil || !bytes.Equal(body, []byte(`{"a":1}`)) {
		t.Fatalf("pooled read after a longer one: %q %v", body, err)
	}
	releaseBody(buf)

	// Short of its declared length: an error, as readBody gives.
	if _, _, err := read(`{"a":`, 7, 1<<20); err == nil {
		t.Error("a body short of its length read without error")
	}
	// Larger than a pooled buffer, of no declared length, or over the
	// limit: read as before, not pooled.
	big := strings.Repeat("z", pooledBodyMax+1)
	if body, buf, err := read(big, int64(len(big)), 1<<20); err != nil || buf != nil || string(body) != big {
		t.Errorf("a body over the pooled size: pooled %v, %v", buf != nil, err)
	}
	if body, buf, err := read(`{}`, -1, 1<<20); err != nil || buf != nil || string(body) != `{}` {
		t.Errorf("a body of no declared length: pooled %v, %v", buf != nil, err)
	}
	if _, buf, err := read(`{"a":1}`, 7, 3); err == nil || buf != nil {
		t.Errorf("a body over the limit: pooled %v, %v", buf != nil, err)
	}
	// A buffer of another size is not kept.
	other := make([]byte, 2*pooledBodyMax)
	releaseBody(&other)
	for range 4 {
		if b := bodyBuffers.Get().(*[]byte); cap(*b) != pooledBodyMax {
			t.Fatalf("the pool holds a buffer of %d bytes", cap(*b))
		}
	}
}
