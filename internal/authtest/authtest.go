// Package authtest is an OAuth authorization server for tests, served on
// 127.0.0.1: RFC 8414 metadata and a JWKS with an RSA and an EC key, whose
// private halves sign the tokens a test makes. It counts the requests each
// path gets, and can be taken down and brought back.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// Server is the authorization server. Its issuer is its URL; metadata is
// at /.well-known/oauth-authorization-server, keys at /jwks.
type Server struct {
	*httptest.Server
	Issuer string
	// RSA and EC are the private signing keys, kids "rsa-1" and "ec-1".
	RSA, EC jwk.Key

	mu   sync.Mutex
	hits map[string]int
	down bool
	hang chan struct{} // while set, requests wait for it to close
	// introspection answers by token; a token not here is inactive
	answers map[string]map[string]any
}

// The client the introspection endpoint (/introspect, RFC 7662, HTTP
// Basic client authentication) answers.
const (
	IntrospectionClient = "resource-server"
	IntrospectionSecret = "introspection-secret"
)

// New starts a Server, stopped when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{RSA: PrivateKey(t, rsaKey, "rsa-1"), EC: PrivateKey(t, ecKey, "ec-1"), hits: map[string]int{}, answers: map[string]map[string]any{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.SetHang(false)
		s.Close()
	})
	s.Issuer = s.URL
	return s
}

// PrivateKey imports raw (an *rsa.PrivateKey, *ecdsa.PrivateKey, ...) as a
// JWK with kid.
func PrivateKey(t testing.TB, raw any, kid string) jwk.Key {
	t.Helper()
	key, err := jwk.Import(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := key.Set(jwk.KeyIDKey, kid); err != nil {
		t.Fatal(err)
	}
	return key
}

// SetDown makes every request fail with 503 (down) or be served again.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

// SetHang makes every request wait, unanswered, until SetHang(false) or
// until its client gives up; or answers them again.
func (s *Server) SetHang(hang bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case hang && s.hang == nil:
		s.hang = make(chan struct{})
	case !hang && s.hang != nil:
		close(s.hang)
		s.hang = nil
	}
}

// Hits is how many requests path has had.
func (s *Server) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	down, hang := s.down, s.hang
	s.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
			return
		}
	}
	if down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(w, map[string]any{"issuer": s.Issuer, "jwks_uri": s.URL + "/jwks", "introspection_endpoint": s.URL + "/introspect"})
	case "/jwks":
		set := jwk.NewSet()
		for _, key := range []jwk.Key{s.RSA, s.EC} {
			public, err := key.PublicKey()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			_ = set.AddKey(public)
		}
		writeJSON(w, set)
	case "/introspect":
		s.introspect(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) introspect(w http.ResponseWriter, r *http.Request) {
	user, password, _ := r.BasicAuth()
	if r.Method != http.MethodPost || user != IntrospectionClient || password != IntrospectionSecret {
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]any{"error": "invalid_client"})
		return
	}
	s.mu.Lock()
	answer, ok := s.answers[r.PostFormValue("token")]
	s.mu.Unlock()
	if !ok {
		answer = map[string]any{"active": false}
	}
	writeJSON(w, answer)
}

// Opaque issues an opaque token for audience with scope, active for an
// hour at the introspection endpoint.
func (s *Server) Opaque(audience, scope string) string {
	token := rand.Text()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[token] = map[string]any{"active": true, "iss": s.Issuer, "aud": audience, "scope": scope,
		"sub": "user-1", "exp": time.Now().Add(time.Hour).Unix()}
	return token
}

// Revoke makes token inactive at the introspection endpoint.
func (s *Server) Revoke(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.answers, token)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Token is an RS256 access token of this issuer for audience, valid for
// an hour, with scope (space-separated, may be empty); extra claims are
// added or replace these.
func (s *Server) Token(t testing.TB, audience, scope string, extra map[string]any) string {
	t.Helper()
	now := time.Now()
	claims := map[string]any{
		"iss": s.Issuer, "sub": "user-1", "aud": audience,
		"iat": now, "exp": now.Add(time.Hour),
	}
	if scope != "" {
		claims["scope"] = scope
	}
	for k, v := range extra {
		claims[k] = v
	}
	return Sign(t, s.RSA, jwa.RS256(), claims)
}

// Sign makes a JWT of claims signed with key under alg.
func Sign(t testing.TB, key jwk.Key, alg jwa.SignatureAlgorithm, claims map[string]any) string {
	t.Helper()
	token := jwt.New()
	for name, value := range claims {
		if err := token.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	signed, err := jwt.Sign(token, jwt.WithKey(alg, key))
	if err != nil {
		t.Fatal(err)
	}
	return string(signed)
}
