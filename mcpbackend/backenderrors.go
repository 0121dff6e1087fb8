package mcpbackend

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// AnswerTooLargeError reports a backend answer over the size limit.
type AnswerTooLargeError struct{ Limit int64 }

func (e *AnswerTooLargeError) Error() string {
	return fmt.Sprintf("the backend's answer is larger than %s", upstream.FormatSize(e.Limit))
}

// BackendError is a backend tool's own error result (isError).
type BackendError struct{ Message string }

func (e *BackendError) Error() string { return e.Message }

// Answer is a tool's result as the code receives it.
type Answer struct {
	// Value is the result as JSON (see Backend.Call).
	Value json.RawMessage
	// Cut is the backend's record of what it left out of a result cut to
	// its max_result_size (the Cut under CutMetaKey), as JSON; nil when
	// the result is whole.
	Cut json.RawMessage
}

// valueOf turns a tool result the client parsed into the answer the code
// receives.
func valueOf(res *mcp.CallToolResult) (Answer, error) {
	r, err := resultFrom(res)
	if err != nil {
		return Answer{}, err
	}
	return r.value()
}

// value is the answer the code receives: the structured content if there
// is one, else the content if it is not all text, else the text parsed as
// JSON if it is JSON, else the text. The text of a result its backend cut
// is read without the note after it, so that cut JSON is still a value.
// A tool's own error comes back as *BackendError.
func (r toolResult) value() (Answer, error) {
	if r.isError {
		msg := strings.Join(r.texts, "\n")
		if msg == "" {
			msg = "the tool failed and gave no message"
		}
		return Answer{}, &BackendError{Message: msg}
	}
	a := Answer{Cut: r.cut}
	var err error
	switch {
	case r.structured != nil:
		a.Value = r.structured
	case r.content != nil:
		a.Value, err = json.Marshal(r.content)
	default:
		text := strings.Join(r.texts, "\n")
		if t := strings.TrimSpace(text); t != "" && json.Valid([]byte(t)) {
			a.Value = json.RawMessage(t)
		} else if kept := cutJSONText(text, r.cut != nil); kept != nil {
			a.Value = kept
		} else {
			// Text, cut or not: a cut one ends with its note.
			a.Value, err = json.Marshal(text)
		}
	}
	return a, err
}

// cutJSONText is the JSON of a text its backend cut, without the note
// after it; nil when the text is not cut JSON.
func cutJSONText(text string, cut bool) json.RawMessage {
	if !cut {
		return nil
	}
	at := upstream.CutNoteStart(text)
	if at < 0 {
		return nil
	}
	if kept := strings.TrimSpace(text[:at]); kept != "" && json.Valid([]byte(kept)) {
		return json.RawMessage(kept)
	}
	return nil
}

// staleSession reports a request the backend refused because it no longer
// knows the session, and so did not run: the answer to a request that
// carried a session was 404 (mcp-go's ErrSessionTerminated) or 400
// (server-everything, mcp-go's SSE server), or mcp-go did not send it at
// all because an earlier answer had ended the session. It goes by status
// and error type only: a tool's own answer, whatever its text, came with
// another status, and a request that may have reached the tool is never
// sent again.
func staleSession(err error, state *callState) bool {
	status, session := state.answer()
	if status == 0 {
		return errors.Is(err, transport.ErrSessionTerminated)
	}
	return session && (status == http.StatusNotFound || status == http.StatusBadRequest)
}

// unreachable reports an error where the request cannot have reached the
// server, so that trying again is safe.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}

// unknownTool reports the JSON-RPC error of a call the server refused for
// its method or tool: -32602 (invalid params, which the spec and mcp-go
// answer for an unknown tool) or -32601. Invalid arguments answer -32602
// too, so this may list the tools again for nothing; it never retries.
func unknownTool(err error) bool {
	return errors.Is(err, mcp.ErrInvalidParams) || errors.Is(err, mcp.ErrMethodNotFound)
}

// cleanMCPError drops the wrappers and URLs net/http and mcp-go put around
// an error, and cuts its text to a preview: mcp-go puts the whole body of
// a failed answer in it.
func cleanMCPError(err error) error {
	var tooLarge *AnswerTooLargeError
	if errors.As(err, &tooLarge) {
		return tooLarge
	}
	var bound *StreamLimitError
	if errors.As(err, &bound) {
		return bound
	}
	var te *transport.Error
	if errors.As(err, &te) && te.Err != nil {
		err = te.Err
	}
	err = upstream.CleanError(err)
	if msg := err.Error(); len(msg) > upstream.PreviewSize {
		return &cutError{msg: upstream.Preview([]byte(strings.ToValidUTF8(msg, "\uFFFD"))), err: err}
	}
	return err
}

// cutError is an error whose text was cut; errors.Is still sees the cause.
type cutError struct {
	msg string
	err error
}

func (e *cutError) Error() string { return e.msg }
func (e *cutError) Unwrap() error { return e.err }
