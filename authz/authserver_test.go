package authz

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/caddy-mcp/caddy-mcp/internal/authtest"
)

// Metadata styles the test authorization server can publish.
const (
	oauthMetadata    = "oauth"         // RFC 8414, issuer path after the well-known part
	oidcInserted     = "oidc-inserted" // OpenID discovery, path after the well-known part
	oidcAppended     = "oidc-appended" // OpenID discovery appended to the issuer
	noMetadata       = "none"
	introspectClient = "resource-server"
	introspectSecret = "s3cr:et&+"
)

// authServer is an authorization server on 127.0.0.1: metadata, a JWKS
// with an RSA and an EC key, and an introspection endpoint. It counts the
// requests each path gets.
type authServer struct {
	*httptest.Server
	issuer string
	rsa    jwk.Key
	ec     jwk.Key

	mu       sync.Mutex
	style    string
	jwks     []byte
	answers  map[string]map[string]any // introspection answers by token
	hits     map[string]int
	metaIss  string // issuer the metadata names; default issuer
	hangJWKS bool

	// gate, when set, holds each introspection until it is closed or
	// the request ends; inFlight and peak count the questions held, held
	// lists their tokens.
	gate           chan struct{}
	inFlight, peak int
	held           []string
}

func newAuthServer(t testing.TB, style string) *authServer {
	t.Helper()
	as := &authServer{style: style, answers: map[string]map[string]any{}, hits: map[string]int{}}
	as.rsa = privateKey(t, mustRSA(t), "rsa-1")
	as.ec = privateKey(t, mustEC(t), "ec-1")
	as.setKeys(t, as.rsa, as.ec)
	as.Server = httptest.NewServer(http.HandlerFunc(as.serve))
	t.Cleanup(as.Close)
	as.issuer = as.URL + "/tenant"
	return as
}

func mustRSA(t testing.TB) *rsa.PrivateKey {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func mustEC(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// privateKey imports a raw private key as a JWK with kid.
var privateKey = authtest.PrivateKey

// setKeys publishes the public halves of keys.
func (as *authServer) setKeys(t testing.TB, keys ...jwk.Key) {
	t.Helper()
	set := jwk.NewSet()
	for _, key := range keys {
		public, err := key.PublicKey()
		if err != nil {
			t.Fatal(err)
		}
		if err := set.AddKey(public); err != nil {
			t.Fatal(err)
		}
	}
	body, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	as.setJWKS(body)
}

func (as *authServer) setJWKS(body []byte) {
	as.mu.Lock()
	as.jwks = body
	as.mu.Unlock()
}

func (as *authServer) count(path string) int {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.hits[path]
}

func (as *authServer) serve(w http.ResponseWriter, r *http.Request) {
	as.mu.Lock()
	as.hits[r.URL.Path]++
	style, jwks, metaIss, hang := as.style, as.jwks, as.metaIss, as.hangJWKS
	as.mu.Unlock()
	if metaIss == "" {
		metaIss = as.issuer
	}
	metadata := map[string]any{"issuer": metaIss, "jwks_uri": as.URL + "/jwks", "introspection_endpoint": as.URL + "/introspect"}
	switch {
	case r.URL.Path == "/.well-known/oauth-authorization-server/tenant" && style == oauthMetadata,
		r.URL.Path == "/.well-known/openid-configuration/tenant" && style == oidcInserted,
		r.URL.Path == "/tenant/.well-known/openid-configuration" && style == oidcAppended:
		writeJSON(w, metadata)
	case r.URL.Path == "/jwks":
		if hang {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(jwks)
	case r.URL.Path == "/introspect":
		as.introspect(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (as *authServer) introspect(w http.ResponseWriter, r *http.Request) {
	as.mu.Lock()
	gate := as.gate
	as.inFlight++
	as.peak = max(as.peak, as.inFlight)
	as.mu.Unlock()
	defer func() {
		as.mu.Lock()
		as.inFlight--
		as.mu.Unlock()
	}()
	if gate != nil {
		r.ParseForm() // the body read, the server notices a client that leaves
		as.mu.Lock()
		as.held = append(as.held, r.PostFormValue("token"))
		as.mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
	}
	user, password, _ := r.BasicAuth()
	user, _ = url.QueryUnescape(user)
	password, _ = url.QueryUnescape(password)
	if r.Method != http.MethodPost || user != introspectClient || password != introspectSecret {
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]any{"error": "invalid_client"})
		return
	}
	as.mu.Lock()
	answer, ok := as.answers[r.PostFormValue("token")]
	as.mu.Unlock()
	if !ok {
		answer = map[string]any{"active": false}
	}
	writeJSON(w, answer)
}

func (as *authServer) setAnswer(token string, answer map[string]any) {
	as.mu.Lock()
	as.answers[token] = answer
	as.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// sign makes a JWT of claims signed with key under alg.
var sign = authtest.Sign

// fakeClock is a Verifier clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
