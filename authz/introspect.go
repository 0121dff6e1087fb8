package authz

import (
	"context"
	"crypto/sha256"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/boundedfetch"
)

// maxIntrospections bounds the questions in flight to the introspection
// endpoint at once, and so the connections to it: each request with a
// new token asks, and 600 requests that their clients abandoned once
// made 599 questions over up to 228 connections at once.
const maxIntrospections = 8

// introspector checks opaque tokens with an RFC 7662 endpoint and keeps its
// answers for ttl, keyed by the token's hash
// so the cache holds no token.
type introspector struct {
	endpoint Introspection
	issuers  []string
	ttl      time.Duration
	client   *boundedfetch.Client
	now      func() time.Time
	answers  *answerCache[*introspection]

	slots chan struct{} // one for each question in flight

	mu       sync.Mutex
	inflight map[[sha256.Size]byte]*introspectCall // one question per token at a time
	failed   error                                 // the last question's error, until one is answered
	failedAt time.Time
}

// introspectCall is one question, waiting for a slot or in flight; done
// closes when answer and err are final. Once no caller waits for it any
// more, its context ends: a question not yet asked is dropped, and one
// in flight ends.
type introspectCall struct {
	done    chan struct{}
	answer  *introspection
	err     error
	ctx     context.Context
	cancel  context.CancelFunc
	waiters int // under introspector.mu
}

// introspection is what the endpoint said of one token.
type introspection struct {
	active    bool
	issuer    string
	audience  []string
	expiry    time.Time // zero when the answer has no exp
	notBefore time.Time
	identity  *Identity
}

func newIntrospector(endpoint Introspection, issuers []string, ttl time.Duration, client *boundedfetch.Client, now func() time.Time) *introspector {
	return &introspector{
		endpoint: endpoint, issuers: issuers, ttl: ttl, client: client, now: now,
		answers:  newAnswerCache[*introspection](),
		inflight: make(map[[sha256.Size]byte]*introspectCall),
		slots:    make(chan struct{}, maxIntrospections),
	}
}

func (in *introspector) verify(ctx context.Context, token, resource string) (*Identity, error) {
	key := sha256.Sum256([]byte(token))
	answer, ok := in.answers.get(key, in.now())
	if !ok {
		var err error
		if answer, err = in.answer(ctx, key, token); err != nil {
			return nil, err
		}
	}
	return answer.check(in.now(), resource, in.issuers)
}

// answer asks the endpoint about token, once for all the requests that
// carry it at the same time, and keeps the answer. At most
// maxIntrospections questions are in flight; the others wait for a slot.
// A caller whose context ends stops waiting, and a question no caller
// waits for any more is dropped. While the endpoint fails, its last
// failure answers for failureRetryInterval: the endpoint is not asked
// once per request while it is down.
func (in *introspector) answer(ctx context.Context, key [sha256.Size]byte, token string) (*introspection, error) {
	in.mu.Lock()
	if in.failed != nil && in.now().Sub(in.failedAt) < failureRetryInterval {
		err := in.failed
		in.mu.Unlock()
		return nil, err
	}
	call := in.inflight[key]
	if call == nil || call.ctx.Err() != nil { // none, or one being dropped
		call = &introspectCall{done: make(chan struct{})}
		call.ctx, call.cancel = context.WithCancel(context.Background())
		in.inflight[key] = call
		go in.run(call, key, token)
	}
	call.waiters++
	in.mu.Unlock()
	select {
	case <-call.done:
		return call.answer, call.err
	case <-ctx.Done():
		in.mu.Lock()
		if call.waiters--; call.waiters == 0 {
			call.cancel()
		}
		in.mu.Unlock()
		return nil, unavailable("checking the token was cancelled", ctx.Err())
	}
}

// run asks the question of call once a slot is free, unless no caller
// waits for it by then.
func (in *introspector) run(call *introspectCall, key [sha256.Size]byte, token string) {
	defer call.cancel()
	var answer *introspection
	var err error
	select {
	case in.slots <- struct{}{}:
		answer, err = in.ask(call.ctx, token) // bounded by fetchTimeout
		<-in.slots
	case <-call.ctx.Done():
		err = call.ctx.Err()
	}
	if err == nil {
		in.keep(key, answer)
	}
	in.mu.Lock()
	switch {
	case err == nil:
		in.failed = nil
	case call.ctx.Err() == nil:
		// A question that ended because no one waited for it says
		// nothing of the endpoint.
		in.failed, in.failedAt = err, in.now()
	}
	if in.inflight[key] == call {
		delete(in.inflight, key)
	}
	in.mu.Unlock()
	call.answer, call.err = answer, err
	close(call.done)
}

// keep caches answer for ttl, even past the token's exp: check refuses it
// then, and an expired token stays expired.
func (in *introspector) keep(key [sha256.Size]byte, answer *introspection) {
	now := in.now()
	in.answers.put(key, answer, now.Add(in.ttl), now)
}

// ask sends token to the introspection endpoint (RFC 7662 section 2.1).
func (in *introspector) ask(ctx context.Context, token string) (*introspection, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	var doc map[string]any
	err := postForm(ctx, in.client, in.endpoint.URL, form, in.endpoint.ClientID, in.endpoint.ClientSecret, &doc)
	if err != nil {
		return nil, unavailable("the introspection endpoint did not answer", err)
	}
	answer := &introspection{identity: &Identity{Claims: make(map[string]string)}}
	answer.active, _ = doc["active"].(bool)
	answer.issuer, _ = doc["iss"].(string)
	answer.audience = audienceList(doc["aud"])
	answer.expiry = numericDate(doc["exp"])
	answer.notBefore = numericDate(doc["nbf"])
	answer.identity.Subject, _ = doc["sub"].(string)
	answer.identity.Scopes = scopeList(doc["scope"])
	for name, value := range doc {
		if s, ok := value.(string); ok {
			answer.identity.Claims[name] = s
		}
	}
	return answer, nil
}

// check applies the rules to a (possibly cached) answer at now.
func (answer *introspection) check(now time.Time, resource string, issuers []string) (*Identity, error) {
	switch {
	case !answer.active:
		return nil, invalid("the token is not active")
	case answer.issuer != "" && !slices.Contains(issuers, answer.issuer):
		return nil, invalid("the token's issuer %.100q is not accepted", answer.issuer)
	case !slices.Contains(answer.audience, resource):
		return nil, invalid("the token is not for %s", resource)
	case !answer.expiry.IsZero() && now.After(answer.expiry.Add(leeway)):
		return nil, invalid("the token has expired")
	case !answer.notBefore.IsZero() && now.Add(leeway).Before(answer.notBefore):
		return nil, invalid("the token is not valid yet")
	}
	return answer.identity, nil
}

func audienceList(value any) []string {
	switch v := value.(type) {
	case string:
		return []string{v}
	case []any:
		var audience []string
		for _, item := range v {
			if s, ok := item.(string); ok {
				audience = append(audience, s)
			}
		}
		return audience
	}
	return nil
}

// numericDate reads a JSON NumericDate (seconds since the epoch).
func numericDate(value any) time.Time {
	seconds, ok := value.(float64)
	if !ok {
		return time.Time{}
	}
	return time.Unix(0, 0).Add(time.Duration(seconds * float64(time.Second)))
}
