package upstream

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestRedirectLocation(t *testing.T) {
	t.Parallel()
	call := Target{Label: "GET /items/{env.K}", Path: "/items/{env.K}", Sent: "/t/tok3n/v1/items/s3cret", Base: "/t/tok3n/v1"}
	tests := []struct{ location, want string }{
		{"/t/tok3n/v1/items/s3cret/", "/items/{env.K}/"},
		{"http://api.example.com/t/tok3n/v1/items/s3cret?page=2", "/items/{env.K}"},
		{"/t/tok3n/v1/login?next=/t/tok3n/v1/items", "/login"},
		{"/t/tok3n/v1", "/"},
		{"https://elsewhere.example/x?key=1#frag", "https://elsewhere.example/x"},
		{"relative/path?key=1", "relative/path"},
	}
	for _, tt := range tests {
		resp := &Response{Status: http.StatusFound, Header: http.Header{"Location": {tt.location}}}
		res, _ := resp.result(context.Background(), call, &Operation{})
		msg := textOf(t, res)
		if !res.IsError || !strings.Contains(msg, "(redirect to "+tt.want+", not followed)") {
			t.Errorf("Location %s: %q, want the target shown as %s", tt.location, msg, tt.want)
		}
		for _, leak := range []string{"tok3n", "s3cret", "key=", "page=", "next="} {
			if strings.Contains(msg, leak) {
				t.Errorf("Location %s: %q shows %s", tt.location, msg, leak)
			}
		}
	}
}
