package authz

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

const (
	// leeway is the clock difference tolerated on exp, nbf and iat.
	leeway = 60 * time.Second
	// maxTokenLength refuses a token before any parsing; real access
	// tokens are a few kilobytes.
	maxTokenLength = 16 << 10
)

// Identity is who a valid token speaks for. Answers may be shared between
// requests: treat it as read-only.
type Identity struct {
	// Subject is the sub claim.
	Subject string
	// Scopes are the token's scopes (scope, or scp as some servers name it).
	Scopes []string
	// Claims holds the token's top-level string claims by name.
	Claims map[string]string
}

// Missing returns the scopes of required that the identity lacks, in order.
func (id *Identity) Missing(required []string) []string {
	var missing []string
	for _, scope := range required {
		if !slices.Contains(id.Scopes, scope) {
			missing = append(missing, scope)
		}
	}
	return missing
}

// Verifier checks bearer tokens for one endpoint. It is safe for concurrent
// use. Making one does no network traffic; the first token does.
type Verifier struct {
	config       Config
	issuers      map[string]*keySource
	introspector *introspector
	// verified keeps JWTs that passed, by the hash of resource and token,
	// until their exp or cache_ttl, whichever comes first: checking a
	// signature costs tens of microseconds, and a client sends one token
	// many times.
	verified *answerCache[*Identity]
	now      func() time.Time
}

// NewVerifier validates config and returns its Verifier.
func NewVerifier(config Config) (*Verifier, error) {
	if err := config.Validate(); err != nil {
		return nil, err
	}
	v := &Verifier{config: config, issuers: make(map[string]*keySource), verified: newAnswerCache[*Identity](), now: time.Now}
	clock := func() time.Time { return v.now() }
	client := newHTTPClient()
	if in := config.Introspection; in != nil {
		v.introspector = newIntrospector(*in, config.Issuers, config.cacheTTL(), client, clock)
		return v, nil
	}
	var shared *keySource
	if config.JWKSURL != "" {
		shared = &keySource{jwksURL: config.JWKSURL, ttl: config.cacheTTL(), client: client, now: clock}
	}
	for _, issuer := range config.Issuers {
		source := shared
		if source == nil {
			source = &keySource{issuer: issuer, ttl: config.cacheTTL(), client: client, now: clock}
		}
		v.issuers[issuer] = source
	}
	return v, nil
}

// Verify checks token for the configured Resource.
func (v *Verifier) Verify(ctx context.Context, token string) (*Identity, error) {
	return v.VerifyFor(ctx, token, v.config.Resource)
}

// VerifyFor checks token for resource, the audience it must carry. Its
// errors are *Error, telling ErrNoToken, ErrInvalidToken and ErrUnavailable
// apart.
func (v *Verifier) VerifyFor(ctx context.Context, token, resource string) (*Identity, error) {
	switch {
	case resource == "":
		return nil, unavailable("no resource to check the token's audience against", nil)
	case token == "":
		return nil, &Error{kind: ErrNoToken, Reason: "no bearer token"}
	case len(token) > maxTokenLength:
		return nil, invalid("the token is longer than %d bytes", maxTokenLength)
	}
	if v.introspector != nil {
		return v.introspector.verify(ctx, token, resource)
	}
	return v.verifyJWT(ctx, token, resource)
}

// signatureAlgorithms are the algorithms a token may be signed with, each
// with the key type it needs. None and the HMAC family are absent: a
// resource server holds no shared secret, and accepting HMAC would let a
// published public key serve as one.
var signatureAlgorithms = map[jwa.SignatureAlgorithm]jwa.KeyType{
	jwa.RS256(): jwa.RSA(), jwa.RS384(): jwa.RSA(), jwa.RS512(): jwa.RSA(),
	jwa.PS256(): jwa.RSA(), jwa.PS384(): jwa.RSA(), jwa.PS512(): jwa.RSA(),
	jwa.ES256(): jwa.EC(), jwa.ES384(): jwa.EC(), jwa.ES512(): jwa.EC(),
	jwa.EdDSA(): jwa.OKP(),
}

func (v *Verifier) verifyJWT(ctx context.Context, token, resource string) (*Identity, error) {
	key := sha256.Sum256([]byte(resource + "\x00" + token))
	now := v.now()
	if id, ok := v.verified.get(key, now); ok {
		return id, nil
	}
	id, until, err := v.checkJWT(ctx, token, resource)
	if err != nil {
		return nil, err
	}
	if limit := now.Add(v.config.cacheTTL()); until.After(limit) {
		until = limit
	}
	v.verified.put(key, id, until, now)
	return id, nil
}

// checkJWT verifies token for resource and returns who it speaks for and
// its exp.
func (v *Verifier) checkJWT(ctx context.Context, token, resource string) (*Identity, time.Time, error) {
	// The key provider runs before the signature is checked; it refuses
	// what must not be tried and records why, since jwx wraps its errors.
	var refusal *Error
	var issuer string // whose keys were tried
	provider := jws.KeyProviderFunc(func(ctx context.Context, sink jws.KeySink, sig *jws.Signature, msg *jws.Message) error {
		issuer, refusal = v.signingKeys(ctx, sink, sig, msg)
		if refusal != nil {
			return refusal
		}
		return nil
	})
	parsed, err := jwt.ParseString(token,
		jwt.WithKeyProvider(provider),
		jwt.WithContext(ctx),
		jwt.WithValidate(true),
		jwt.WithClock(jwt.ClockFunc(v.now)),
		jwt.WithAcceptableSkew(leeway),
		jwt.WithAudience(resource),
		jwt.WithRequiredClaim(jwt.ExpirationKey),
	)
	if refusal != nil {
		return nil, time.Time{}, refusal
	}
	if err != nil {
		return nil, time.Time{}, jwtRefusal(err, resource)
	}
	// The keys were chosen by the iss the payload holds; the claims jwx
	// read must name that same issuer.
	if iss, ok := parsed.Issuer(); !ok || iss != issuer {
		return nil, time.Time{}, invalid("the token's issuer is not the one whose keys signed it")
	}
	expiry, _ := parsed.Expiration() // required above
	return tokenIdentity(parsed), expiry, nil
}

// signingKeys sends the keys that may have signed sig to sink: keys of the
// issuer the token names (if it is one of ours), of the type its algorithm
// needs, with its kid when it names one.
func (v *Verifier) signingKeys(ctx context.Context, sink jws.KeySink, sig *jws.Signature, msg *jws.Message) (string, *Error) {
	alg, ok := sig.ProtectedHeaders().Algorithm()
	if !ok {
		return "", invalid("the token names no signature algorithm")
	}
	keyType, ok := signatureAlgorithms[alg]
	if !ok {
		return "", invalid("the token's signature algorithm %.20q is not accepted", alg.String())
	}
	// The member named exactly "iss": encoding/json would also fill a
	// field from "Iss" or "ISS".
	var claims map[string]json.RawMessage
	if err := json.Unmarshal(msg.Payload(), &claims); err != nil {
		return "", invalid("the token's claims are not a JSON object")
	}
	var issuer string
	if err := json.Unmarshal(claims["iss"], &issuer); err != nil {
		return "", invalid("the token names no issuer (iss)")
	}
	source, ok := v.issuers[issuer]
	if !ok {
		return "", invalid("the token's issuer %.100q is not accepted", issuer)
	}
	kid, _ := sig.ProtectedHeaders().KeyID()
	set, err := source.keys(ctx, kid)
	if err != nil {
		var refusal *Error
		if errors.As(err, &refusal) {
			return "", refusal
		}
		return "", unavailable("the authorization server's keys could not be read", err)
	}
	found := false
	for i := range set.Len() {
		key, _ := set.Key(i)
		if usable(key, kid, alg, keyType) {
			sink.Key(alg, key)
			found = true
		}
	}
	if !found {
		return "", invalid("no key of the issuer fits the token's kid and algorithm")
	}
	return issuer, nil
}

func usable(key jwk.Key, kid string, alg jwa.SignatureAlgorithm, keyType jwa.KeyType) bool {
	if key.KeyType() != keyType {
		return false
	}
	if keyID, _ := key.KeyID(); kid != "" && keyID != kid {
		return false
	}
	if use, ok := key.KeyUsage(); ok && use != "" && use != jwk.ForSignature.String() {
		return false
	}
	if keyAlg, ok := key.Algorithm(); ok && keyAlg.String() != alg.String() {
		return false
	}
	return true
}

// jwtRefusal turns jwx's parse and validation errors into a reason a
// client may read.
func jwtRefusal(err error, resource string) *Error {
	var reason string
	switch {
	case errors.Is(err, jwt.TokenExpiredError()):
		reason = "the token has expired"
	case errors.Is(err, jwt.TokenNotYetValidError()):
		reason = "the token is not valid yet"
	case errors.Is(err, jwt.InvalidIssuedAtError()):
		reason = "the token is issued in the future"
	case errors.Is(err, jwt.InvalidAudienceError()):
		reason = fmt.Sprintf("the token is not for %s", resource)
	case errors.Is(err, jwt.MissingRequiredClaimError()):
		reason = "the token has no expiry (exp)"
	case errors.Is(err, jws.VerificationError()):
		reason = "the token's signature does not verify"
	default:
		reason = "the token is not a well-formed signed JWT"
	}
	return &Error{kind: ErrInvalidToken, Reason: reason, cause: err}
}

func tokenIdentity(token jwt.Token) *Identity {
	id := &Identity{Claims: make(map[string]string)}
	id.Subject, _ = token.Subject()
	for _, name := range token.Keys() {
		var value any
		if token.Get(name, &value) != nil {
			continue
		}
		if s, ok := value.(string); ok {
			id.Claims[name] = s
		}
		if name == "scope" || name == "scp" {
			id.Scopes = append(id.Scopes, scopeList(value)...)
		}
	}
	slices.Sort(id.Scopes)
	id.Scopes = slices.Compact(id.Scopes)
	return id
}

// scopeList reads a scope claim: a space-separated string (RFC 9068,
// RFC 7662), or a list of strings as some servers write scp. Only scope
// tokens (RFC 6749 section 3.3) count, split at spaces alone: a tab or a
// Unicode space inside one does not make two scopes of it.
func scopeList(value any) []string {
	switch v := value.(type) {
	case string:
		var scopes []string
		for s := range strings.SplitSeq(v, " ") {
			if IsScopeToken(s) {
				scopes = append(scopes, s)
			}
		}
		return scopes
	case []any:
		var scopes []string
		for _, item := range v {
			if s, ok := item.(string); ok && IsScopeToken(s) {
				scopes = append(scopes, s)
			}
		}
		return scopes
	case []string:
		return v
	}
	return nil
}
