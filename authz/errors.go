package authz

import (
	"errors"
	"fmt"
)

// The kinds of refusal a handler tells apart with errors.Is. Both end in
// HTTP 401; an unavailable authorization server is also worth a log line,
// since no client can fix it.
var (
	// ErrNoToken: the request carries no bearer token.
	ErrNoToken = errors.New("no bearer token")
	// ErrInvalidToken: the token is malformed, badly signed, expired, not
	// yet valid, for another audience or issuer, or inactive.
	ErrInvalidToken = errors.New("invalid token")
	// ErrUnavailable: the authorization server (its metadata, keys or
	// introspection endpoint) could not be read, so no token can be checked.
	ErrUnavailable = errors.New("authorization server unavailable")
)

// Error is a refusal. Reason is short and safe to send to the client (it
// never holds the token); Error() adds the cause, for the log.
type Error struct {
	kind   error
	Reason string
	cause  error
}

func (e *Error) Error() string {
	if e.cause == nil {
		return e.Reason
	}
	return e.Reason + ": " + e.cause.Error()
}

// Unwrap lets errors.Is find the kind (ErrInvalidToken, ErrUnavailable,
// ErrNoToken) and the cause.
func (e *Error) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

func invalid(format string, args ...any) *Error {
	return &Error{kind: ErrInvalidToken, Reason: fmt.Sprintf(format, args...)}
}

func unavailable(reason string, cause error) *Error {
	return &Error{kind: ErrUnavailable, Reason: reason, cause: cause}
}
