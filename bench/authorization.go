package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// issuer is the authorization server of the authorization row, served by
// this process on 127.0.0.1 so that the run needs no network: a JWKS with
// an RSA and an EC P-256 key, whose private halves sign the clients'
// tokens. Caddy reads the keys once, at the first token it sees.
type issuer struct {
	url  string // the issuer identifier; the keys are at url + "/jwks"
	keys []signingKey
	jwks []byte
	srv  *http.Server
	n    atomic.Int64 // tokens made
}

type signingKey struct {
	key jwk.Key
	alg jwa.SignatureAlgorithm
}

// tokenLifetime is long enough for any run: the clients' tokens never
// expire during it, so every verification after the first is the cache's.
const tokenLifetime = 24 * time.Hour

// startIssuer makes the keys and serves their JWKS on a free port.
func startIssuer() (*issuer, error) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	is := &issuer{}
	set := jwk.NewSet()
	for _, k := range []struct {
		raw any
		kid string
		alg jwa.SignatureAlgorithm
	}{{rsaKey, "rsa-1", jwa.RS256()}, {ecKey, "ec-1", jwa.ES256()}} {
		key, err := jwk.Import(k.raw)
		if err != nil {
			return nil, err
		}
		if err := key.Set(jwk.KeyIDKey, k.kid); err != nil {
			return nil, err
		}
		public, err := key.PublicKey()
		if err != nil {
			return nil, err
		}
		if err := set.AddKey(public); err != nil {
			return nil, err
		}
		is.keys = append(is.keys, signingKey{key, k.alg})
	}
	if is.jwks, err = json.Marshal(set); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	is.url = "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(is.jwks)
	})
	is.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go is.srv.Serve(ln)
	return is, nil
}

func (is *issuer) stop() {
	if is != nil {
		is.srv.Close()
	}
}

// authorizationBlock is the Caddyfile block that makes an endpoint at
// resource accept this issuer's tokens.
func (is *issuer) authorizationBlock(resource string) string {
	return fmt.Sprintf(`
		authorization {
			issuer %s
			jwks_url %s/jwks
			resource %s
		}`, is.url, is.url, resource)
}

// token makes a token of a client of its own for audience, signed by the
// RSA and the EC key in turn.
func (is *issuer) token(audience string, now time.Time) (string, error) {
	n := is.n.Add(1)
	k := is.keys[int(n)%len(is.keys)]
	t := jwt.New()
	for name, value := range map[string]any{
		jwt.IssuerKey: is.url, jwt.AudienceKey: audience, jwt.SubjectKey: fmt.Sprintf("bench-client-%d", n),
		jwt.IssuedAtKey: now, jwt.ExpirationKey: now.Add(tokenLifetime),
	} {
		if err := t.Set(name, value); err != nil {
			return "", err
		}
	}
	signed, err := jwt.Sign(t, jwt.WithKey(k.alg, k.key))
	if err != nil {
		return "", fmt.Errorf("signing a %s token: %w", k.alg, err)
	}
	return string(signed), nil
}

// authorizedConfig is the authorization row's configuration name. It is
// compared with "mcp upstream" of the same protocol, measured just before
// it.
const authorizedConfig = "mcp upstream + authorization"

// authorizedCPUBudget is what authorization may add to a call's CPU
// once the caller's token has been verified.
const authorizedCPUBudget = 50 * time.Microsecond

// pairedCost is a row beside the same configuration without what the row
// adds, "mcp upstream" of its protocol, at one concurrency level.
type pairedCost struct {
	Without, With Measurement
}

// ratio is the row's throughput over the throughput without.
func (c pairedCost) ratio() float64 {
	if c.Without.Throughput == 0 {
		return 0
	}
	return c.With.Throughput / c.Without.Throughput
}

// addedCPU is the CPU per call the row adds.
func (c pairedCost) addedCPU() time.Duration {
	return c.With.CPUPerRequest - c.Without.CPUPerRequest
}

// pairedCosts pairs each measurement of the configuration named config
// with the one of "mcp upstream" of its protocol and concurrency, in the
// order measured.
func (r *report) pairedCosts(config string) []pairedCost {
	var out []pairedCost
	for _, m := range r.ms {
		if m.Config != config {
			continue
		}
		if without := r.find("mcp upstream", m.Protocol, m.Concurrency); without != nil {
			out = append(out, pairedCost{Without: *without, With: m})
		}
	}
	return out
}

// authorizationCosts pairs each measurement of the authorization row with
// the one of "mcp upstream" of its protocol and concurrency.
func (r *report) authorizationCosts() []pairedCost { return r.pairedCosts(authorizedConfig) }
