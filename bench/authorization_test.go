package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/caddy-mcp/caddy-mcp/authz"
)

// TestIssuerTokens checks the clients' tokens with the verifier Caddy
// uses, reading the keys from the JWKS the issuer serves: each is valid
// for its audience only, for a client of its own, for the whole run, and
// the two keys take turns.
func TestIssuerTokens(t *testing.T) {
	is, err := startIssuer()
	if err != nil {
		t.Fatal(err)
	}
	defer is.stop()
	const audience, other = "http://127.0.0.1:9/mcp", "http://127.0.0.1:10/mcp"
	verifier := func(resource string) *authz.Verifier {
		v, err := authz.NewVerifier(authz.Config{Issuers: []string{is.url}, Resource: resource, JWKSURL: is.url + "/jwks"})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	mine, theirs := verifier(audience), verifier(other)
	now := time.Now()
	subjects := map[string]bool{}
	algs := map[string]int{}
	for i := 0; i < 4; i++ {
		token, err := is.token(audience, now)
		if err != nil {
			t.Fatal(err)
		}
		id, err := mine.Verify(context.Background(), token)
		if err != nil {
			t.Fatalf("token %d refused: %v", i, err)
		}
		if subjects[id.Subject] {
			t.Errorf("token %d: subject %q given before", i, id.Subject)
		}
		subjects[id.Subject] = true
		if _, err := theirs.Verify(context.Background(), token); err == nil {
			t.Errorf("token %d accepted for %s", i, other)
		}
		parsed, err := jwt.ParseInsecure([]byte(token))
		if err != nil {
			t.Fatal(err)
		}
		if exp, _ := parsed.Expiration(); exp.Before(now.Add(tokenLifetime - time.Minute)) {
			t.Errorf("token %d expires at %s, within the run", i, exp)
		}
		msg, err := jws.ParseString(token)
		if err != nil {
			t.Fatal(err)
		}
		alg, _ := msg.Signatures()[0].ProtectedHeaders().Algorithm()
		algs[alg.String()]++
	}
	if algs["RS256"] != 2 || algs["ES256"] != 2 {
		t.Errorf("algorithms of 4 tokens: %v, want RS256 and ES256 twice each", algs)
	}
}

// TestIssuerPublishesPublicKeysOnly: the JWKS holds the two public keys
// and no private member.
func TestIssuerPublishesPublicKeysOnly(t *testing.T) {
	is, err := startIssuer()
	if err != nil {
		t.Fatal(err)
	}
	defer is.stop()
	resp, err := http.Get(is.url + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var set struct{ Keys []map[string]any }
	if err := json.Unmarshal(body, &set); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /jwks: %d %s (%v)", resp.StatusCode, body, err)
	}
	var kids []any
	for _, k := range set.Keys {
		kids = append(kids, k["kid"])
		for _, private := range []string{"d", "p", "q", "dp", "dq", "qi"} {
			if _, ok := k[private]; ok {
				t.Errorf("key %v publishes %q", k["kid"], private)
			}
		}
	}
	if len(kids) != 2 || kids[0] != "rsa-1" || kids[1] != "ec-1" {
		t.Errorf("kids %v, want [rsa-1 ec-1]", kids)
	}
}

func TestAuthorizationCosts(t *testing.T) {
	m := func(config, protocol string, c int, tput float64, cpu time.Duration) Measurement {
		return Measurement{Config: config, Protocol: protocol, Concurrency: c, Throughput: tput, CPUPerRequest: cpu}
	}
	r := &report{ms: []Measurement{
		m("reverse_proxy", "REST", 16, 8000, 150*time.Microsecond),
		m("mcp upstream", "2025-11-25", 16, 7600, 148*time.Microsecond),
		m("mcp upstream", "2025-11-25", 64, 8400, 150*time.Microsecond),
		m(authorizedConfig, "2025-11-25", 16, 7220, 156*time.Microsecond),
		m(authorizedConfig, "2025-11-25", 64, 8400, 149*time.Microsecond),
		m("mcp upstream", "2026-07-28", 16, 9000, 140*time.Microsecond),
		m(authorizedConfig, "2026-07-28", 32, 9000, 140*time.Microsecond), // nothing to pair with
	}}
	got := r.authorizationCosts()
	want := []struct {
		c       int
		ratio   float64
		cpu     time.Duration
		without float64
	}{{16, 0.95, 8 * time.Microsecond, 7600}, {64, 1, -time.Microsecond, 8400}}
	if len(got) != len(want) {
		t.Fatalf("%d pairs, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.With.Concurrency != w.c || g.Without.Concurrency != w.c || g.Without.Config != "mcp upstream" || g.Without.Throughput != w.without {
			t.Errorf("pair %d: %+v, want c=%d against mcp upstream at %.0f req/s", i, g, w.c, w.without)
		}
		if g.ratio() < w.ratio-0.001 || g.ratio() > w.ratio+0.001 {
			t.Errorf("pair %d: ratio %.3f, want %.3f", i, g.ratio(), w.ratio)
		}
		if g.addedCPU() != w.cpu {
			t.Errorf("pair %d: added CPU %s, want %s", i, g.addedCPU(), w.cpu)
		}
	}
	if (pairedCost{}).ratio() != 0 {
		t.Error("a ratio over no throughput is not 0")
	}
}
