package authz

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
)

const testResource = "https://mcp.example.com/mcp"

// newTestVerifier builds a Verifier for as with a clock the test controls.
func newTestVerifier(t *testing.T, config Config) (*Verifier, *fakeClock) {
	t.Helper()
	v, err := NewVerifier(config)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Now()}
	v.now = clock.Now
	return v, clock
}

// claims are those of a good token at now, with changes applied.
func claims(as *authServer, now time.Time, changes map[string]any) map[string]any {
	c := map[string]any{
		"iss":   as.issuer,
		"aud":   testResource,
		"sub":   "user-42",
		"exp":   now.Add(5 * time.Minute),
		"iat":   now,
		"scope": "tools:read tools:write",
		"email": "ada@example.com",
	}
	return changed(c, changes)
}

// changed applies changes to m: a nil value deletes the member.
func changed(m, changes map[string]any) map[string]any {
	for name, value := range changes {
		if value == nil {
			delete(m, name)
		} else {
			m[name] = value
		}
	}
	return m
}

// compact assembles a JWS from parts, for tokens no library would sign.
func compact(t *testing.T, header map[string]any, claims any, signature func(input string) []byte) string {
	t.Helper()
	part := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := part(header) + "." + part(claims)
	return input + "." + base64.RawURLEncoding.EncodeToString(signature(input))
}

// rs256 signs a compact JWS input with key, for payloads written by hand.
func rs256(t *testing.T, key jwk.Key) func(input string) []byte {
	t.Helper()
	var raw rsa.PrivateKey
	if err := jwk.Export(key, &raw); err != nil {
		t.Fatal(err)
	}
	return func(input string) []byte {
		sum := sha256.Sum256([]byte(input))
		sig, err := rsa.SignPKCS1v15(rand.Reader, &raw, crypto.SHA256, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
}

func TestVerifyJWT(t *testing.T) {
	as := newAuthServer(t, oauthMetadata)
	v, clock := newTestVerifier(t, Config{Issuers: []string{as.issuer}, Resource: testResource})
	now := clock.Now()
	otherRSA := privateKey(t, mustRSA(t), "rsa-1") // same kid, not the published key
	publicJSON, err := json.Marshal(must(as.rsa.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		token  string
		reason string // "" for acceptance
	}{
		{"rs256", sign(t, as.rsa, jwa.RS256(), claims(as, now, nil)), ""},
		{"ps256", sign(t, as.rsa, jwa.PS256(), claims(as, now, nil)), ""},
		{"es256", sign(t, as.ec, jwa.ES256(), claims(as, now, nil)), ""},
		{"audience list holding the resource", sign(t, as.rsa, jwa.RS256(), claims(as, now, map[string]any{"aud": []string{"https://other.example", testResource}})), ""},
		{"expired within leeway", sign(t, as.rsa, jwa.RS256(), claims(as, now, map[string]any{"exp": now.Add(-30 * time.Second), "iat": now.Add(-time.Hour)})), ""},
		{"not yet valid within leeway", sign(t, as.rsa, jwa.RS256(), claims(as, now, map[string]any{"nbf": now.Add(30 * time.Second)})), ""},
		{"expired beyond leeway", sign(t, as.rsa, jwa.RS256(), claims(as, now, map[string]any{"exp": now.Add(-61 * time.Second), "iat": now.Add(-time.Hour)})), "expired"},
		{"nbf in the future", sign(t, as.rsa, jwa.RS256(), claims(as, now, map[string]any{"nbf": now.Add(2 * time.Minute)})), "not valid yet"},
		{"no exp", sign(t, as.rsa, jwa.RS256(), claims(as, now, map[string]any{"exp": nil})), "no expiry"},
		{"wrong issuer", sign(t, as.rsa, jwa.RS256(), claims(as, now, map[string]any{"iss": as.URL + "/other"})), "issuer"},
		{"another issuer, ours in a member of another case after it", compact(t, map[string]any{"alg": "RS256", "kid": "rsa-1"},
			json.RawMessage(`{"iss":"https://evil.example","Iss":"`+as.issuer+`","sub":"user-42","aud":"`+testResource+`","exp":`+strconv.FormatInt(now.Add(time.Hour).Unix(), 10)+`}`),
			rs256(t, as.rsa)), "issuer"},
		{"no issuer", sign(t, as.rsa, jwa.RS256(), claims(as, now, map[string]any{"iss": nil})), "issuer"},
		{"wrong audience", sign(t, as.rsa, jwa.RS256(), claims(as, now, map[string]any{"aud": "https://mcp.example.com/other"})), "not for " + testResource},
		{"no audience", sign(t, as.rsa, jwa.RS256(), claims(as, now, map[string]any{"aud": nil})), "not for"},
		{"signed by another key with the published kid", sign(t, otherRSA, jwa.RS256(), claims(as, now, nil)), "signature does not verify"},
		{"rsa kid with an ec algorithm", compact(t, map[string]any{"alg": "ES256", "kid": "rsa-1"}, claims(as, now, nil), func(string) []byte { return make([]byte, 64) }), "no key"},
		{"alg none", compact(t, map[string]any{"alg": "none", "kid": "rsa-1"}, claims(as, now, nil), func(string) []byte { return nil }), "algorithm \"none\" is not accepted"},
		{"hs256 with the public key as secret", compact(t, map[string]any{"alg": "HS256", "kid": "rsa-1"}, claims(as, now, nil), func(input string) []byte {
			mac := hmac.New(sha256.New, publicJSON)
			mac.Write([]byte(input))
			return mac.Sum(nil)
		}), "algorithm \"HS256\" is not accepted"},
		{"garbage", "not-a-jwt", "well-formed"},
		{"two parts", "eyJhbGciOiJSUzI1NiJ9.e30", "well-formed"},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := v.Verify(context.Background(), tt.token)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if id.Subject != "user-42" || !slices.Equal(id.Scopes, []string{"tools:read", "tools:write"}) || id.Claims["email"] != "ada@example.com" || id.Claims["iss"] != as.issuer {
					t.Fatalf("identity %+v", id)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted %+v", id)
			}
			var refusal *Error
			if !errors.Is(err, ErrInvalidToken) || errors.Is(err, ErrUnavailable) || !errors.As(err, &refusal) {
				t.Fatalf("error %v is not an invalid-token refusal", err)
			}
			if !strings.Contains(refusal.Reason, tt.reason) {
				t.Fatalf("reason %q, want it to say %q", refusal.Reason, tt.reason)
			}
			if strings.Contains(refusal.Reason, tt.token) || strings.Contains(err.Error(), tt.token) {
				t.Fatalf("the error shows the token: %v", err)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestVerifyScopeClaims(t *testing.T) {
	as := newAuthServer(t, oauthMetadata)
	v, clock := newTestVerifier(t, Config{Issuers: []string{as.issuer}, Resource: testResource})
	tests := []struct {
		name    string
		changes map[string]any
		want    []string
	}{
		{"scope string", nil, []string{"tools:read", "tools:write"}},
		{"scp list", map[string]any{"scope": nil, "scp": []string{"b", "a"}}, []string{"a", "b"}},
		{"scp string", map[string]any{"scope": nil, "scp": "x y"}, []string{"x", "y"}},
		{"none", map[string]any{"scope": nil}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := v.Verify(context.Background(), sign(t, as.rsa, jwa.RS256(), claims(as, clock.Now(), tt.changes)))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(id.Scopes, tt.want) {
				t.Fatalf("scopes %q, want %q", id.Scopes, tt.want)
			}
		})
	}
}

func TestVerifyNeedsAToken(t *testing.T) {
	as := newAuthServer(t, oauthMetadata)
	v, _ := newTestVerifier(t, Config{Issuers: []string{as.issuer}, Resource: testResource})
	_, err := v.Verify(context.Background(), "")
	if !errors.Is(err, ErrNoToken) {
		t.Fatalf("error %v, want ErrNoToken", err)
	}
	_, err = v.Verify(context.Background(), strings.Repeat("a", maxTokenLength+1))
	if !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("error %v, want ErrInvalidToken", err)
	}
	if got := as.count("/jwks") + as.count("/.well-known/oauth-authorization-server/tenant"); got != 0 {
		t.Fatalf("%d fetches for tokens that cannot be valid", got)
	}
}

func TestNewVerifierDoesNoNetwork(t *testing.T) {
	as := newAuthServer(t, oauthMetadata)
	if _, err := NewVerifier(Config{Issuers: []string{as.issuer}, Resource: testResource}); err != nil {
		t.Fatal(err)
	}
	as.mu.Lock()
	hits := maps.Clone(as.hits)
	as.mu.Unlock()
	if len(hits) != 0 {
		t.Fatalf("construction fetched %v", hits)
	}
}

func TestIdentityMissing(t *testing.T) {
	id := &Identity{Scopes: []string{"a", "c"}}
	tests := []struct {
		required, want []string
	}{
		{nil, nil},
		{[]string{"a"}, nil},
		{[]string{"b", "a", "d"}, []string{"b", "d"}},
	}
	for _, tt := range tests {
		if got := id.Missing(tt.required); !slices.Equal(got, tt.want) {
			t.Errorf("Missing(%q) = %q, want %q", tt.required, got, tt.want)
		}
	}
}

// BenchmarkVerify is the cost of checking one token once the keys are
// cached, the cost an authorized request adds: for a token seen before,
// and for one seen for the first time.
func BenchmarkVerify(b *testing.B) {
	as := newAuthServer(b, oauthMetadata)
	v, err := NewVerifier(Config{Issuers: []string{as.issuer}, Resource: testResource})
	if err != nil {
		b.Fatal(err)
	}
	for _, bench := range []struct {
		name string
		key  jwk.Key
		alg  jwa.SignatureAlgorithm
	}{{"RS256", as.rsa, jwa.RS256()}, {"ES256", as.ec, jwa.ES256()}} {
		token := sign(b, bench.key, bench.alg, claims(as, time.Now(), nil))
		if _, err := v.Verify(context.Background(), token); err != nil {
			b.Fatal(err)
		}
		// repeat: the token was verified before (the cache answers);
		// first: every time is its first (the signature is checked).
		for _, mode := range []string{"repeat", "first"} {
			b.Run(bench.name+"/"+mode, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if mode == "first" {
						v.verified.mu.Lock()
						clear(v.verified.entries)
						v.verified.mu.Unlock()
					}
					if _, err := v.Verify(context.Background(), token); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
