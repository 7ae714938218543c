package shim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/outcome"
)

// OperationID sends id with the request in HeaderOperationID. It names
// the operation, not the send: every attempt of one operation carries the
// same ID (Attempts sends it on every attempt; a caller that calls again
// after an unknown outcome passes the same ID again), so that a responder
// that makes its effect conditional on the ID (see the package doc,
// "Operation IDs") does it once. The header counts against the limit
// like any other. id must be 1 to MaxOperationIDLen printable ASCII
// characters without spaces (for example a UUID or a NUID); an empty or
// malformed id refuses the call before anything is sent
// (INVALID_ARGUMENT, ErrInvalidOption, OutcomeNotRun).
func OperationID(id string) CommonOption {
	return commonOpt(func(o *callOpts) error {
		if msg := badOperationID(id); msg != "" {
			return invalidOption("OperationID(%q): %s", callerr.Truncate(id, 64), msg)
		}
		o.opID = id
		return nil
	})
}

func badOperationID(id string) string {
	switch {
	case id == "":
		return "an empty operation ID"
	case len(id) > MaxOperationIDLen:
		return fmt.Sprintf("longer than %d bytes", MaxOperationIDLen)
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return fmt.Sprintf("byte %d (%q) is not printable ASCII without spaces", i, id[i])
		}
	}
	return ""
}

// Attempts is a call-level CallOption of Client.Request and RequestMsg: it
// lets this one call send the request up to n times, all within the call's
// one deadline (never beyond it). For code that is not a single Client
// call, use Retry, whose RetryOption MaxAttempts is its counterpart. Which failures are sent again:
//
//   - not run (no responders, the connection reconnecting or lost before
//     the send): always;
//   - unknown outcome (the attempt's time ran out, the connection was lost
//     after sending, a remote INTERNAL or 5xx error, a lost claim-checked
//     reply): only when the call carries an OperationID, since only a
//     responder that de-duplicates on it makes the repeat harmless;
//   - a rejection, a refusal that would be the same again (invalid input,
//     too large, a closed connection, the caller's context done), and a
//     PAYLOAD_TOO_LARGE reply: never.
//
// The schedule (see the package doc, "Attempts: the schedule"): every
// attempt of a call answers to the same reply inbox, so a reply to any
// attempt answers the call, however late within the deadline. Each
// attempt tells the responder all the time the call has left
// (HeaderTimeout). With an OperationID an attempt that was sent waits
// AttemptTimeout (DefaultAttemptTimeout unless set) for a reply before the
// request is sent again, and the last attempt waits for all the time
// left; without one, an attempt that was sent is never repeated, so it
// waits for all the time left. After a failure that did not run the call
// waits a backoff with jitter (from 20 ms, doubling, at most 500 ms, each
// wait between half and all of that), never past the deadline. So
// Attempts never fails a call that a single attempt would have completed
// within the same deadline (a repeat's error that would end the call,
// for example a responder failing a concurrent duplicate of an operation
// ID at once, is held while an earlier attempt is unanswered: the call
// waits for that answer up to its deadline), and n may be as large as you like
// (math.MaxInt included): the deadline bounds the call.
//
// When the call fails after more than one attempt, the error is a *Error
// whose Attempts lists every attempt's error and whose message says how
// many attempts were made and what each ended with; errors.Is and the
// fields Code, Remote, Sent see the last attempt's error. Its Outcome is
// OutcomeUnknown when any attempt's was, otherwise the last one's.
//
// A claim-checked request (WithClaimChecks) is stored once per call, sent
// as the same reference by every attempt, and deleted once when the call
// ends. A claim-checked reply to an attempt the call no longer waits for
// is deleted by the caller when it arrives.
//
// n must be at least 1; the default, 1, is one send as without Attempts.
func Attempts(n int) AttemptOption {
	return attemptOpt(func(o *callOpts) error {
		if n < 1 {
			return invalidOption("Attempts(%d): at least 1 attempt", n)
		}
		o.attempts = n
		return nil
	})
}

// Backoff between attempts of one call.
const (
	attemptBackoff    = 20 * time.Millisecond
	attemptBackoffMax = 500 * time.Millisecond
)

// jitter returns a wait between d/2 and d.
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// resendable reports whether a call that failed with err may be sent
// again (see Attempts); withID says whether it carries an OperationID.
func resendable(err error, withID bool) bool {
	switch Classify(err) {
	case OutcomeNotRun:
		return worthRepeating(err)
	case OutcomeUnknown:
		var e *Error
		return withID && errors.As(err, &e) && e != nil && e.Code != CodeCanceled && e.Code != CodePayloadTooLarge
	}
	return false
}

// worthRepeating is the one rule, shared by Attempts and Retry, for a
// failure that certainly did not run: it is worth repeating unless the
// same refusal would come again (invalid input or option, a message too
// large, the caller's own cancellation, a closed connection or store).
func worthRepeating(err error) bool {
	e := Describe(err)
	if e == nil || e.Outcome() != OutcomeNotRun {
		return false
	}
	switch e.Code {
	case CodeInvalidArgument, CodePayloadTooLarge, CodeCanceled, CodeNotFound, CodeDataLoss:
		return false
	}
	for _, permanent := range []error{nats.ErrConnectionClosed, ErrInvalidOption, claimcheck.ErrClosed, context.Canceled, nats.ErrMaxPayload} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	return true
}

// attemptsError is the error of an operation tried len(errs) times: the
// last error itself after one attempt, otherwise a *Error that lists them.
func attemptsError(errs []error) error {
	last := errs[len(errs)-1]
	if len(errs) == 1 {
		return last
	}
	le := Describe(last) // a claimcheck error too
	kind := le.Outcome()
	var b strings.Builder
	fmt.Fprintf(&b, "after %d attempts (", len(errs))
	for i, err := range errs {
		o := Classify(err)
		if o == OutcomeUnknown {
			kind = OutcomeUnknown
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d: %s, %s", i+1, Describe(err).Code, o)
	}
	b.WriteString(")")
	e := outcome.New(le.Code, b.String(), kind, last)
	e.Remote, e.Sent, e.Size, e.Limit = le.Remote, le.Sent, le.Size, le.Limit
	e.Attempts = errs
	return e
}

// opIDKey is the context key of the caller's operation ID in a Handler.
type opIDKey struct{}

// OperationIDFrom returns, in a Handler or JSONHandler's function, the
// caller's operation ID (HeaderOperationID), or "" when the request has
// none. See the package doc, "Operation IDs", for what a responder must
// do with it.
func OperationIDFrom(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	id, _ := ctx.Value(opIDKey{}).(string)
	return id
}

// withOperationID returns ctx carrying req's operation ID, if any.
func withOperationID(ctx context.Context, req *nats.Msg) context.Context {
	if id := req.Header.Get(HeaderOperationID); id != "" {
		return context.WithValue(ctx, opIDKey{}, id)
	}
	return ctx
}
