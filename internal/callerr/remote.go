package callerr

import (
	"errors"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/outcome"
)

// The wire names of an error reply (docs/protocol.md, 4): micro's error
// headers and natssend's rejection mark.
const (
	HeaderErrorCode = "Nats-Service-Error-Code"
	HeaderError     = "Nats-Service-Error"
	HeaderOutcome   = "Natssend-Outcome"
	OutcomeRejected = "rejected" // HeaderOutcome's value
)

// MaxErrorMessage caps the description in an error reply (or a stream's
// error frame) so that the reply stays small.
const MaxErrorMessage = 1024

// RemoteError returns the *outcome.Error carried by a reply's micro error
// headers, or nil when the reply is not an error reply.
//
// The outcome is outcome.Rejected only when the responder says the
// request had no effect: natssend handlers mark rejections with
// HeaderOutcome, and INVALID_ARGUMENT and 4xx codes (micro's convention
// for client errors) count as rejections too. Every other code (INTERNAL,
// PAYLOAD_TOO_LARGE, 5xx, custom codes) is outcome.Unknown: the
// responder may have done the work.
func RemoteError(m *nats.Msg) *outcome.Error {
	if len(m.Header) == 0 {
		return nil
	}
	code := m.Header.Get(HeaderErrorCode)
	desc := m.Header.Get(HeaderError)
	if code == "" && desc == "" {
		return nil
	}
	if code == "" {
		code = outcome.CodeInternal
	}
	k := outcome.Unknown
	if (m.Header.Get(HeaderOutcome) == OutcomeRejected || code == outcome.CodeInvalidArgument || isClientErrorCode(code)) &&
		code != outcome.CodePayloadTooLarge && code != outcome.CodeInternal {
		k = outcome.Rejected
	}
	e := outcome.New(code, desc, k, nil)
	e.Remote, e.Sent = true, true
	return e
}

// isClientErrorCode reports whether code is an HTTP-style 4xx code.
func isClientErrorCode(code string) bool {
	return len(code) == 3 && code[0] == '4' && code[1] >= '0' && code[1] <= '9' && code[2] >= '0' && code[2] <= '9'
}

// RemoteFailure is a responder's failure it reported without error
// headers (a stream's error frame without them): INTERNAL, it may have
// run.
func RemoteFailure(msg string) *outcome.Error {
	e := outcome.MayHaveRunError(outcome.CodeInternal, msg, nil)
	e.Remote = true
	return e
}

// IsNoResponders reports whether m is the server's no-responders status.
func IsNoResponders(m *nats.Msg) bool {
	return len(m.Data) == 0 && m.Header.Get("Status") == "503"
}

// ErrorFields maps a handler's error to the fields of its error reply
// (or a stream's error frame): the handler's own *outcome.Error keeps its
// code, a rejection (outcome.Reject) is marked as such, and one built by
// hand (a struct literal) is sent as it is. An error that came from a call
// the handler made (a remote error, or a failed send of its own) is
// INTERNAL, like any other error: the handler may have done work before
// it.
func ErrorFields(err error) (code, msg string, rejected bool) {
	var e *outcome.Error
	if errors.As(err, &e) && e != nil && !e.Remote {
		switch {
		case e.Outcome() == outcome.Rejected:
			return e.Code, e.Message, true
		case !outcome.Built(e): // built by hand
			return e.Code, e.Message, false
		}
		if e.Code == outcome.CodeInternal {
			return outcome.CodeInternal, e.Message, false
		}
	}
	return outcome.CodeInternal, err.Error(), false
}

// ErrorHeader is the header of an error reply or error frame: code,
// message cut to MaxErrorMessage, and the rejection mark.
func ErrorHeader(code, message string, rejected bool) nats.Header {
	h := nats.Header{
		HeaderErrorCode: []string{code},
		HeaderError:     []string{Truncate(message, MaxErrorMessage)},
	}
	if rejected {
		h[HeaderOutcome] = []string{OutcomeRejected}
	}
	return h
}

// Truncate cuts s to at most n bytes, on a rune boundary.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
