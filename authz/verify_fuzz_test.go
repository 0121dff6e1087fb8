package authz

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	_ "crypto/sha256"
	_ "crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/caddy-mcp/caddy-mcp/internal/authtest"
)

// fuzzNow is the verifier's clock in FuzzVerify: fixed, so that a seed
// means the same thing on every run.
var fuzzNow = time.Unix(1_767_225_600, 0)

// fuzzMembers are the header (first eight) and claims members an extra
// value of FuzzVerify may set, whatever its JSON type.
var fuzzMembers = []string{"typ", "kid", "alg", "crit", "b64", "jwk", "cty", "x5u", "aud", "exp", "nbf", "iat", "iss", "sub", "scope", "scp"}

// FuzzVerify feeds a Verifier, whose authorization server is a real one
// on 127.0.0.1, arbitrary tokens (shape bit 0: raw as it is) and tokens
// built from fuzzed headers and claims, signed with the issuer's key for
// the algorithm the header names, or not re-signed, or signed by another
// key, or not signed. An independent reference (fuzzReference: its own
// base64, JSON and signature checks with crypto/rsa and crypto/ecdsa)
// decides what Verify must do: refuse any token breaking a rule (an
// algorithm that is not asymmetric, a signature that no published key of
// the token's kid makes, iss not configured, aud without the resource,
// exp missing, not a date or past beyond the leeway, nbf or iat in the
// future beyond it, sub not a string), accept a plain good one, and, when
// it accepts, name the claims' sub, scopes and string claims. A date
// written as a string (which jwx reads) may be accepted, but is held to
// the same rules.
//
// shape picks: bits 1-2 the signature (the issuer's key for alg, the
// signature of another token, an attacker's key, none); bits 3-4 the kid
// (the signer's, none, kid, the other key's); bit 5 iss instead of the
// issuer; bits 6-7 the audience (the resource, a list holding it, aud, a
// list of aud); bit 8 no exp; bit 9 an nbf; bits 10-11 the scopes (scope
// string, scp string, scp list, none); bit 12 no typ; bits 13-16 and
// 17-20 the members (fuzzMembers) that extra1 and extra2 set when bits
// 21 and 22 are set (as JSON when they are JSON, else as a string).
// exp and nbf are seconds from the verifier's clock.
func FuzzVerify(f *testing.F) {
	type seed struct {
		raw                            string
		shape                          uint32
		alg, kid, iss, aud, sub, scope string
		exp, nbf                       int64
		extra1, extra2                 string
	}
	const (
		signOther   = 1 << 1
		signAttack  = 2 << 1
		signNone    = 3 << 1
		kidNone     = 1 << 3
		kidFuzz     = 2 << 3
		kidOther    = 3 << 3
		issFuzz     = 1 << 5
		audList     = 1 << 6
		audFuzz     = 2 << 6
		audFuzzList = 3 << 6
		noExp       = 1 << 8
		withNbf     = 1 << 9
		scpString   = 1 << 10
		scpList     = 2 << 10
		noScope     = 3 << 10
		noTyp       = 1 << 12
	)
	member := func(name string, slot int) uint32 {
		i := uint32(slices.Index(fuzzMembers, name))
		return i<<(13+4*slot) | 1<<(21+slot)
	}
	good := seed{alg: "RS256", scope: "tools:read tools:write", sub: "user-1", exp: 300}
	with := func(change func(*seed)) seed { s := good; change(&s); return s }
	seeds := []seed{
		good,
		with(func(s *seed) { s.alg = "PS256" }),
		with(func(s *seed) { s.alg = "ES256" }),
		with(func(s *seed) { s.alg = "RS512"; s.shape = kidNone }),
		with(func(s *seed) { s.alg = "ES384" }),
		with(func(s *seed) { s.alg = "EdDSA" }),
		with(func(s *seed) { s.alg = "none"; s.shape = signNone }),
		with(func(s *seed) { s.alg = "HS256" }),
		with(func(s *seed) { s.alg = "RS256"; s.shape = kidOther }),
		with(func(s *seed) { s.shape = kidFuzz; s.kid = "rsa-2" }),
		with(func(s *seed) { s.shape = kidFuzz; s.kid = "rsa" }),
		with(func(s *seed) { s.shape = signOther }),
		with(func(s *seed) { s.shape = signAttack }),
		with(func(s *seed) { s.shape = signAttack | member("jwk", 0); s.extra1 = "attacker-jwk" }),
		with(func(s *seed) { s.shape = issFuzz; s.iss = "https://evil.example" }),
		with(func(s *seed) { s.shape = audList }),
		with(func(s *seed) { s.shape = audFuzz; s.aud = testResource + "/" }),
		with(func(s *seed) { s.shape = audFuzzList; s.aud = testResource }),
		with(func(s *seed) { s.shape = noExp }),
		with(func(s *seed) { s.exp = -61 }),
		with(func(s *seed) { s.exp = -30 }),
		with(func(s *seed) { s.exp = -120 }),
		with(func(s *seed) { s.exp = 1 << 40 }),
		with(func(s *seed) { s.shape = withNbf; s.nbf = 30 }),
		with(func(s *seed) { s.shape = withNbf; s.nbf = 120 }),
		with(func(s *seed) { s.shape = withNbf; s.nbf = -1 << 62 }),
		with(func(s *seed) { s.shape = scpString; s.scope = "x y" }),
		with(func(s *seed) { s.shape = scpList; s.scope = "b a" }),
		with(func(s *seed) { s.shape = noScope; s.sub = "" }),
		with(func(s *seed) { s.shape = member("exp", 0); s.extra1 = `"1900000000"` }),
		with(func(s *seed) { s.shape = member("exp", 0); s.extra1 = `"2099-01-01T00:00:00Z"` }),
		with(func(s *seed) { s.shape = member("exp", 0); s.extra1 = `1e300` }),
		with(func(s *seed) { s.shape = member("exp", 0); s.extra1 = `1.9e9` }),
		with(func(s *seed) { s.shape = member("exp", 0); s.extra1 = `-9223372036854775808` }),
		with(func(s *seed) { s.shape = member("nbf", 0); s.extra1 = `"2099-01-01T00:00:00Z"` }),
		with(func(s *seed) { s.shape = member("nbf", 0); s.extra1 = `99999999999999999999` }),
		with(func(s *seed) { s.shape = member("iat", 0); s.extra1 = `4102444800` }),
		with(func(s *seed) {
			s.shape = member("aud", 0) | member("iss", 1)
			s.extra1 = `[1,"` + testResource + `"]`
			s.extra2 = `["x"]`
		}),
		with(func(s *seed) {
			s.shape = member("sub", 0) | member("scp", 1)
			s.extra1 = `42`
			s.extra2 = `["a",1,{"b":2},"c d"]`
		}),
		with(func(s *seed) { s.shape = member("scope", 0); s.extra1 = `["a","b"]` }),
		with(func(s *seed) {
			s.shape = member("crit", 0) | member("b64", 1)
			s.extra1 = `["b64"]`
			s.extra2 = `false`
		}),
		with(func(s *seed) { s.shape = member("typ", 0) | member("kid", 1); s.extra1 = `7`; s.extra2 = `null` }),
		with(func(s *seed) { s.shape = member("alg", 0); s.extra1 = `["RS256"]` }),
		{raw: "", shape: 1},
		{raw: "not-a-jwt", shape: 1},
		{raw: "eyJhbGciOiJSUzI1NiJ9.e30", shape: 1},
		{raw: "eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.", shape: 1},
		{raw: `{"payload":"e30","signatures":[{"protected":"eyJhbGciOiJSUzI1NiJ9","signature":"AA"}]}`, shape: 1},
		{raw: "a.b.c.d.e", shape: 1},
	}
	for _, s := range seeds {
		f.Add(s.raw, s.shape, s.alg, s.kid, s.iss, s.aud, s.sub, s.scope, s.exp, s.nbf, []byte(s.extra1), []byte(s.extra2))
	}

	as := authtest.New(f)
	v, err := NewVerifier(Config{Issuers: []string{as.Issuer}, Resource: testResource})
	if err != nil {
		f.Fatal(err)
	}
	v.now = func() time.Time { return fuzzNow }
	var rawRSA, rawEC any
	if err := jwk.Export(as.RSA, &rawRSA); err != nil {
		f.Fatal(err)
	}
	if err := jwk.Export(as.EC, &rawEC); err != nil {
		f.Fatal(err)
	}
	rsaKey, ecKey := rawRSA.(*rsa.PrivateKey), rawEC.(*ecdsa.PrivateKey)
	attacker, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.Fatal(err)
	}
	attackerJWK, err := json.Marshal(must(must(jwk.Import(attacker)).PublicKey()))
	if err != nil {
		f.Fatal(err)
	}
	publicJWK, err := json.Marshal(must(as.RSA.PublicKey()))
	if err != nil {
		f.Fatal(err)
	}
	ref := &fuzzReference{issuer: as.Issuer, keys: []fuzzKey{{"rsa-1", &rsaKey.PublicKey}, {"ec-1", &ecKey.PublicKey}}}
	signer := &fuzzSigner{rsa: rsaKey, ec: ecKey, attacker: attacker, hmacSecret: publicJWK}
	// otherSignature is the issuer's signature of another token.
	otherSignature := signer.sign("RS256", "eyJhbGciOiJSUzI1NiJ9.e30", false)

	f.Fuzz(func(t *testing.T, raw string, shape uint32, alg, kid, iss, aud, sub, scope string, exp, nbf int64, extra1, extra2 []byte) {
		token := raw
		if shape&1 == 0 {
			var header, claims fuzzObject
			if alg == "" {
				alg = "RS256"
			}
			header.set("alg", alg)
			if shape&noTyp == 0 {
				header.set("typ", "at+jwt")
			}
			signerKid, otherKid := "rsa-1", "ec-1"
			if strings.HasPrefix(alg, "ES") {
				signerKid, otherKid = otherKid, signerKid
			}
			header.choose("kid", shape>>3&3, signerKid, nil, kid, otherKid)
			issuer := as.Issuer
			if shape&issFuzz != 0 {
				issuer = iss
			}
			claims.set("iss", issuer)
			if sub != "" {
				claims.set("sub", sub)
			}
			claims.choose("aud", shape>>6&3, testResource, []string{"https://other.example/mcp", testResource}, aud, []string{aud})
			if shape&noExp == 0 {
				claims.setRaw("exp", secondsFrom(fuzzNow, exp))
			}
			if shape&withNbf != 0 {
				claims.setRaw("nbf", secondsFrom(fuzzNow, nbf))
			}
			claims.setRaw("iat", secondsFrom(fuzzNow, 0))
			switch shape >> 10 & 3 {
			case 0:
				claims.set("scope", scope)
			case 1:
				claims.set("scp", scope)
			case 2:
				claims.set("scp", strings.Split(scope, " "))
			}
			for slot, extra := range [][]byte{extra1, extra2} {
				if shape>>(21+slot)&1 == 0 {
					continue
				}
				name := fuzzMembers[shape>>(13+4*slot)&15]
				value := json.RawMessage(extra)
				switch {
				case name == "jwk" && string(extra) == "attacker-jwk":
					value = attackerJWK
				case !json.Valid(extra):
					value = mustJSON(t, string(extra))
				}
				if slices.Index(fuzzMembers, name) < 8 {
					header.setRaw(name, value)
				} else {
					claims.setRaw(name, value)
				}
			}
			input := base64.RawURLEncoding.EncodeToString(header.json()) + "." + base64.RawURLEncoding.EncodeToString(claims.json())
			var signature []byte
			switch shape >> 1 & 3 {
			case 0:
				signature = signer.sign(alg, input, false)
			case 1:
				signature = otherSignature
			case 2:
				signature = signer.sign(alg, input, true)
			}
			token = input + "." + base64.RawURLEncoding.EncodeToString(signature)
		}

		want := ref.verdict(token)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		id, err := v.Verify(ctx, token)
		if err != nil {
			var refusal *Error
			if token == "" {
				if !errors.Is(err, ErrNoToken) {
					t.Fatalf("an empty token: %v, want ErrNoToken", err)
				}
				return
			}
			if !errors.As(err, &refusal) || !errors.Is(err, ErrInvalidToken) || errors.Is(err, ErrUnavailable) {
				t.Fatalf("%s\nrefused with %v, not an invalid-token refusal", token, err)
			}
			if len(token) >= 16 && strings.Contains(err.Error(), token) {
				t.Fatalf("the error shows the token: %v", err)
			}
			if len(want.refuse) == 0 && len(want.odd) == 0 {
				t.Fatalf("%s\nrefused (%v), but the reference accepts it", token, err)
			}
			return
		}
		if len(want.refuse) > 0 {
			t.Fatalf("%s\naccepted as %+v, but the reference refuses it: %s", token, id, strings.Join(want.refuse, "; "))
		}
		if id.Subject != want.subject || !slices.Equal(id.Scopes, want.scopes) {
			t.Fatalf("%s\nidentity sub %q scopes %q, want sub %q scopes %q", token, id.Subject, id.Scopes, want.subject, want.scopes)
		}
		for name, value := range want.strings {
			if got, ok := id.Claims[name]; !ok || got != value {
				t.Fatalf("%s\nclaim %s is %q, want %q", token, name, got, value)
			}
		}
		for name := range id.Claims {
			if _, ok := want.strings[name]; !ok {
				t.Fatalf("%s\nclaim %s is not a string claim of the token", token, name)
			}
		}
	})
}

// fuzzObject is a JSON object whose members keep their order; setting a
// member again replaces it.
type fuzzObject struct {
	names  []string
	values []json.RawMessage
}

func (o *fuzzObject) set(name string, value any) {
	b, err := json.Marshal(value)
	if err != nil {
		panic(err)
	}
	o.setRaw(name, b)
}

// choose sets name to the choice'th of values, or leaves it out for nil.
func (o *fuzzObject) choose(name string, choice uint32, values ...any) {
	if value := values[choice]; value != nil {
		o.set(name, value)
	}
}

func (o *fuzzObject) setRaw(name string, value json.RawMessage) {
	if i := slices.Index(o.names, name); i >= 0 {
		o.values[i] = value
		return
	}
	o.names = append(o.names, name)
	o.values = append(o.values, value)
}

func (o *fuzzObject) json() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, name := range o.names {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		b.Write(key)
		b.WriteByte(':')
		b.Write(o.values[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// secondsFrom is now plus delta seconds as a JSON number, without
// overflow.
func secondsFrom(now time.Time, delta int64) json.RawMessage {
	sum := new(big.Int).Add(big.NewInt(now.Unix()), big.NewInt(delta))
	return json.RawMessage(sum.String())
}

// fuzzSigner signs a token's input for the algorithm its header names,
// with the issuer's key of that type (or an attacker's RSA key).
type fuzzSigner struct {
	rsa, attacker *rsa.PrivateKey
	ec            *ecdsa.PrivateKey
	hmacSecret    []byte
}

func (s *fuzzSigner) sign(alg, input string, attack bool) []byte {
	hash, ok := fuzzHash(alg)
	if !ok {
		return nil
	}
	h := hash.New()
	h.Write([]byte(input))
	digest := h.Sum(nil)
	rsaKey := s.rsa
	if attack {
		rsaKey = s.attacker
	}
	switch alg[:2] {
	case "RS":
		sig, err := rsa.SignPKCS1v15(rand.Reader, rsaKey, hash, digest)
		if err != nil {
			panic(err)
		}
		return sig
	case "PS":
		sig, err := rsa.SignPSS(rand.Reader, rsaKey, hash, digest, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		if err != nil {
			panic(err)
		}
		return sig
	case "ES":
		if attack {
			sig, _ := rsa.SignPKCS1v15(rand.Reader, rsaKey, hash, digest)
			return sig
		}
		r, sv, err := ecdsa.Sign(rand.Reader, s.ec, digest)
		if err != nil {
			panic(err)
		}
		sig := make([]byte, 64)
		r.FillBytes(sig[:32])
		sv.FillBytes(sig[32:])
		return sig
	case "HS":
		mac := hmac.New(hash.New, s.hmacSecret)
		mac.Write([]byte(input))
		return mac.Sum(nil)
	}
	return nil
}

// fuzzHash is the hash of a JWS algorithm of the RS, PS, ES and HS
// families.
func fuzzHash(alg string) (crypto.Hash, bool) {
	if len(alg) != 5 || !slices.Contains([]string{"RS", "PS", "ES", "HS"}, alg[:2]) {
		return 0, false
	}
	switch alg[2:] {
	case "256":
		return crypto.SHA256, true
	case "384":
		return crypto.SHA384, true
	case "512":
		return crypto.SHA512, true
	}
	return 0, false
}

type fuzzKey struct {
	kid string
	key crypto.PublicKey
}

// fuzzReference decides, apart from the code under test, what Verify
// must do with a token.
type fuzzReference struct {
	issuer string
	keys   []fuzzKey
}

// fuzzExpected is the reference's verdict: refuse lists the rules the
// token breaks (it must be refused); odd lists what lets Verify go either
// way (e.g. non-canonical base64, an exponent in a date); with neither, it
// must be accepted as subject with scopes and the string claims.
type fuzzExpected struct {
	refuse, odd []string
	subject     string
	scopes      []string
	strings     map[string]string
}

func (r *fuzzReference) verdict(token string) fuzzExpected {
	var e fuzzExpected
	refuse := func(format string, args ...any) fuzzExpected {
		e.refuse = append(e.refuse, fmt.Sprintf(format, args...))
		return e
	}
	odd := func(why string) { e.odd = append(e.odd, why) }
	if len(token) > maxTokenLength {
		return refuse("too long")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return refuse("not three parts")
	}
	// decode reads a part as base64url, others being odd; object reads
	// it as a JSON object.
	decode := func(part, what string) ([]byte, bool) {
		b, canonical, ok := fuzzDecode(part)
		if ok && !canonical {
			odd(what + " in another base64")
		}
		return b, ok
	}
	object := func(part, what string) (map[string]any, bool) {
		b, ok := decode(part, what)
		if !ok {
			return nil, false
		}
		return fuzzJSONObject(b, odd)
	}
	header, ok := object(parts[0], "header")
	if !ok {
		return refuse("header not a base64url JSON object")
	}
	alg, _ := header["alg"].(string)
	if !slices.Contains([]string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}, alg) {
		return refuse("alg %v not asymmetric", header["alg"])
	}
	kid, hasKid := header["kid"]
	kidString, isString := kid.(string)
	if hasKid && !isString {
		odd("kid not a string") // no key has it; Verify may refuse it or try every key
	}
	for name, value := range header {
		if _, isString := value.(string); !(name == "alg" || name == "kid" || name == "typ" && isString) {
			odd("header member " + name)
		}
	}
	signature, ok := decode(parts[2], "signature")
	if !ok {
		return refuse("signature not base64url")
	}
	if !r.signed(alg, kidString, parts[0]+"."+parts[1], signature, odd) {
		return refuse("no published key of kid %q made the signature", kidString)
	}

	claims, ok := object(parts[1], "claims")
	if !ok {
		return refuse("claims not a base64url JSON object")
	}
	if iss, _ := claims["iss"].(string); iss != r.issuer {
		refuse("iss %v not configured", claims["iss"])
	}
	switch aud := claims["aud"].(type) {
	case string:
		if aud != testResource {
			refuse("aud %q", aud)
		}
	case []any:
		found := false
		for _, item := range aud {
			s, isString := item.(string)
			found = found || s == testResource
			if !isString {
				odd("aud item not a string")
			}
		}
		if !found {
			refuse("aud %v without the resource", aud)
		}
	default:
		refuse("aud %v", claims["aud"])
	}
	now := big.NewRat(fuzzNow.Unix(), 1)
	leewayRat := big.NewRat(int64(leeway/time.Second), 1)
	for _, name := range []string{"exp", "nbf", "iat"} {
		value, present := claims[name]
		if !present {
			if name == "exp" {
				refuse("no exp")
			}
			continue
		}
		at, written, ok := fuzzDate(value)
		if !ok {
			refuse("%s %v not a date", name, value)
			continue
		}
		if written != "number" || at.Cmp(big.NewRat(253402300799, 1)) > 0 || at.Sign() < 0 {
			odd(name + " written as " + written + " or out of range")
		}
		// Past (exp) or future (nbf, iat) beyond the leeway, with a
		// second's slack either side for rounding.
		bound := new(big.Rat).Sub(now, leewayRat)
		if name != "exp" {
			bound = new(big.Rat).Add(now, leewayRat)
		}
		diff := new(big.Rat).Sub(at, bound)
		if name != "exp" {
			diff.Neg(diff)
		}
		switch {
		case diff.Cmp(big.NewRat(-2, 1)) < 0:
			refuse("%s %v beyond the leeway", name, value)
		case diff.Cmp(big.NewRat(2, 1)) <= 0:
			odd(name + " at the leeway's edge")
		}
	}
	e.strings = make(map[string]string)
	for name, value := range claims {
		// aud and the dates are never string claims, however written.
		if s, ok := value.(string); ok && !slices.Contains([]string{"aud", "exp", "nbf", "iat"}, name) {
			e.strings[name] = s
		}
	}
	if sub, present := claims["sub"]; present {
		s, ok := sub.(string)
		if !ok {
			refuse("sub %v not a string", sub)
		}
		e.subject = s
	}
	// Scopes: scope and scp, space-separated strings (RFC 6749 section
	// 3.3) or lists, keeping only scope tokens.
	for _, name := range []string{"scope", "scp"} {
		switch value := claims[name].(type) {
		case string:
			for _, s := range strings.Split(value, " ") {
				if IsScopeToken(s) {
					e.scopes = append(e.scopes, s)
				}
			}
		case []any:
			for _, item := range value {
				if s, ok := item.(string); ok && IsScopeToken(s) {
					e.scopes = append(e.scopes, s)
				}
			}
		}
	}
	slices.Sort(e.scopes)
	e.scopes = slices.Compact(e.scopes)
	return e
}

// signed reports whether a published key fitting alg and kid ("" for
// any) made signature over input.
func (r *fuzzReference) signed(alg, kid, input string, signature []byte, odd func(string)) bool {
	hash, ok := fuzzHash(alg)
	if !ok {
		return false // EdDSA: the issuer publishes no OKP key
	}
	h := hash.New()
	h.Write([]byte(input))
	digest := h.Sum(nil)
	for _, k := range r.keys {
		if kid != "" && kid != k.kid {
			continue
		}
		switch key := k.key.(type) {
		case *rsa.PublicKey:
			switch alg[:2] {
			case "RS":
				if rsa.VerifyPKCS1v15(key, hash, digest, signature) == nil {
					return true
				}
			case "PS":
				if rsa.VerifyPSS(key, hash, digest, signature, nil) == nil {
					return true
				}
			}
		case *ecdsa.PublicKey:
			if alg[:2] != "ES" || len(signature) != 64 {
				continue
			}
			if ecdsa.Verify(key, digest, new(big.Int).SetBytes(signature[:32]), new(big.Int).SetBytes(signature[32:])) {
				if alg != "ES256" {
					odd(alg + " with a P-256 key")
				}
				return true
			}
		}
	}
	return false
}

// fuzzDecode decodes a JWS part: canonical is base64url without padding;
// other base64 alphabets and padding decode too, as not canonical.
func fuzzDecode(s string) (b []byte, canonical, ok bool) {
	if b, err := base64.RawURLEncoding.Strict().DecodeString(s); err == nil {
		return b, true, true
	}
	for _, enc := range []*base64.Encoding{base64.URLEncoding, base64.RawStdEncoding, base64.StdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, false, true
		}
	}
	return nil, false, false
}

// fuzzJSONObject decodes one JSON object, numbers as json.Number; a
// member named twice is odd (the last one wins, as in encoding/json).
func fuzzJSONObject(b []byte, odd func(string)) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false // something after the object
	}
	names := json.NewDecoder(bytes.NewReader(b))
	seen := make(map[string]bool)
	depth := 0
	for {
		tok, err := names.Token()
		if err != nil {
			break
		}
		switch tok := tok.(type) {
		case json.Delim:
			if tok == '{' || tok == '[' {
				depth++
			} else {
				depth--
			}
		case string:
			if depth == 1 {
				// A top-level name (each value is skipped as a whole).
				if seen[tok] {
					odd("member " + tok + " twice")
				}
				seen[tok] = true
				var skip json.RawMessage
				if names.Decode(&skip) != nil {
					return m, true
				}
			}
		}
	}
	return m, true
}

// plainDecimal is a number of seconds written as a string.
var plainDecimal = regexp.MustCompile(`^-?[0-9]+(\.[0-9]*)?$`)

// fuzzDate reads a date claim: a JSON number (RFC 7519's NumericDate), or
// a string of a plain decimal number or an RFC 3339 time, which Verify
// may read too (jwx does, for servers that write them); written says
// which. Anything else is not a date.
func fuzzDate(value any) (at *big.Rat, written string, ok bool) {
	switch v := value.(type) {
	case json.Number:
		at, ok = new(big.Rat).SetString(string(v))
		written = "number"
		if strings.ContainsAny(string(v), ".eE") {
			written = "a number with a fraction or an exponent"
		}
		return at, written, ok
	case string:
		if plainDecimal.MatchString(v) {
			at, ok = new(big.Rat).SetString(strings.TrimSuffix(v, "."))
			return at, "a string", ok
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, "", false
		}
		at = new(big.Rat).Add(big.NewRat(t.Unix(), 1), big.NewRat(int64(t.Nanosecond()), int64(time.Second)))
		return at, "an RFC 3339 string", true
	}
	return nil, "", false
}
