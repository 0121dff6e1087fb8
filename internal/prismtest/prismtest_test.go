//go:build unix

package prismtest

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestStart runs Prism on the Petstore and sends it requests that keep to
// the document and requests that break it: each broken one is a violation
// naming what was wrong, whatever status Prism answered; a kept one is
// none.
func TestStart(t *testing.T) {
	s := Start(t, filepath.Join(Documents(t), "@readme/oas-examples/3.0/json/petstore.json"), Options{})
	auth := map[string]string{"Authorization": "Bearer token", "Accept": "application/json"}
	tests := []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
		want                     []string // substrings of the violations, in order; none for a request that keeps to the document
	}{
		{name: "a request the document allows", method: "GET", path: "/pet/findByStatus?status=available&status=sold", header: auth, status: 200},
		{name: "a missing required query parameter, answered by the document's 400",
			method: "GET", path: "/pet/findByStatus", header: auth, status: 400,
			want: []string{"GET /pet/findByStatus: error at request.query: Request query must have required property 'status'"}},
		{name: "a query value outside the enum", method: "GET", path: "/pet/findByStatus?status=lost", header: auth, status: 400,
			want: []string{"at request.query.status.0: Request query parameter status.0 must be equal to one of the allowed values"}},
		{name: "a body that breaks its schema, where the document has no 4xx answer: Prism's own 422",
			method: "POST", path: "/pet", body: `{"name":3}`, status: 422,
			header: map[string]string{"Authorization": "Bearer token", "Content-Type": "application/json"},
			want:   []string{"POST /pet: error: Request body must have required property 'photoUrls'", "Request body property name must be string"}},
		{name: "missing credentials", method: "GET", path: "/pet/findByStatus?status=available", status: 401,
			want: []string{"GET /pet/findByStatus: error: Invalid security scheme used"}},
		{name: "a path the document lacks", method: "GET", path: "/pets/1", header: auth, status: 404,
			want: []string{"GET /pets/1: error: https://stoplight.io/prism/errors#NO_PATH_MATCHED_ERROR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := s.Mark()
			req, err := http.NewRequest(tt.method, s.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			reqs, violations := s.Since(t, m)
			if len(reqs) != 1 || reqs[0].Method+" "+reqs[0].URI() != tt.method+" "+tt.path || string(reqs[0].Body) != tt.body || reqs[0].Status != tt.status {
				t.Errorf("recorded %+v; want the one request as sent, answered %d", reqs, tt.status)
			}
			if len(violations) != len(tt.want) {
				t.Fatalf("violations %q, want %d: %q", violations, len(tt.want), tt.want)
			}
			for i, v := range violations {
				if !strings.Contains(v.String(), tt.want[i]) {
					t.Errorf("violation %d is %q, want it to hold %q", i, v, tt.want[i])
				}
			}
		})
	}
}

// TestStartOwnAnswer shows an answer of Prism's own that breaks the
// document (its example does) told apart from a request's violation: a
// 500, and a violation at "response"; with Dynamic, Prism answers from the
// schema instead, and keeps to it.
func TestStartOwnAnswer(t *testing.T) {
	servers := StartAll(t, Document{Path: "testdata/bad-example.yaml"}, Document{Path: "testdata/bad-example.yaml", Options: Options{Dynamic: true}})
	for i, want := range []struct {
		status     int
		violations []string
	}{
		{500, []string{"GET /things/1: error at response: https://stoplight.io/prism/errors#VIOLATIONS: Request/Response not valid"}},
		{200, nil},
	} {
		s := servers[i]
		m := s.Mark()
		resp, err := http.Get(s.URL + "/things/1")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		_, violations := s.Since(t, m)
		var got []string
		for _, v := range violations {
			got = append(got, v.String())
			if !v.OfResponse() {
				t.Errorf("%s is not of the response", v)
			}
		}
		if resp.StatusCode != want.status || strings.Join(got, "\n") != strings.Join(want.violations, "\n") {
			t.Errorf("server %d: status %d, violations %q; want %d, %q", i, resp.StatusCode, got, want.status, want.violations)
		}
	}
}
