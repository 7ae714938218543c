package shim

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/callerr"
)

// TestErrorTable checks every row of the README's table "What each error
// means for the caller": the mapping from what nats.go, the context, the
// responder or the claim check store reported to Code, Classify, Sent and
// the errors.Is targets.
func TestErrorTable(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	reply := func(kv ...string) *nats.Msg {
		m := &nats.Msg{Header: nats.Header{}}
		for i := 0; i < len(kv); i += 2 {
			m.Header.Set(kv[i], kv[i+1])
		}
		return m
	}
	remote := func(m *nats.Msg) error {
		if e := callerr.RemoteError(m); e != nil {
			return e
		}
		return nil
	}
	for _, row := range []struct {
		name    string
		err     error
		code    string
		outcome Outcome
		sent    bool
		is      []error
	}{
		{"local PAYLOAD_TOO_LARGE", callerr.TooLarge("request", 10, 5, nil), CodePayloadTooLarge, OutcomeNotRun, false, []error{ErrPayloadTooLarge, nats.ErrMaxPayload}},
		{"PAYLOAD_TOO_LARGE from nats.go after the call began", callerr.SendError(ctx, nats.ErrMaxPayload, true), CodePayloadTooLarge, OutcomeNotRun, false, []error{ErrPayloadTooLarge, nats.ErrMaxPayload}},
		{"NO_RESPONDERS", callerr.SendError(ctx, nats.ErrNoResponders, true), CodeNoResponders, OutcomeNotRun, true, []error{nats.ErrNoResponders}},
		{"UNAVAILABLE before sending: closed", callerr.SendError(ctx, nats.ErrConnectionClosed, false), CodeUnavailable, OutcomeNotRun, false, []error{nats.ErrConnectionClosed}},
		{"UNAVAILABLE before sending: reconnecting", callerr.SendError(ctx, nats.ErrConnectionReconnecting, false), CodeUnavailable, OutcomeNotRun, false, []error{nats.ErrConnectionReconnecting}},
		{"UNAVAILABLE before sending: no reconnect buffer", callerr.SendError(ctx, nats.ErrReconnectBufExceeded, true), CodeUnavailable, OutcomeNotRun, false, []error{nats.ErrConnectionReconnecting, nats.ErrReconnectBufExceeded}},
		{"UNAVAILABLE before sending: draining", callerr.SendError(ctx, nats.ErrConnectionDraining, true), CodeUnavailable, OutcomeNotRun, false, []error{nats.ErrConnectionDraining}},
		{"INVALID_ARGUMENT: subject", callerr.SendError(ctx, nats.ErrBadSubject, true), CodeInvalidArgument, OutcomeNotRun, false, []error{nats.ErrBadSubject}},
		{"INVALID_ARGUMENT: header key", callerr.SendError(ctx, nats.ErrBadHeaderMsg, true), CodeInvalidArgument, OutcomeNotRun, false, []error{nats.ErrBadHeaderMsg}},
		{"INVALID_ARGUMENT: nil message", callerr.SendError(ctx, nats.ErrInvalidMsg, false), CodeInvalidArgument, OutcomeNotRun, false, []error{nats.ErrInvalidMsg}},
		{"INVALID_ARGUMENT: invalid option", NewClient(nil, WithTimeout(0)).Err(), CodeInvalidArgument, OutcomeNotRun, false, []error{ErrInvalidOption, claimcheck.ErrInvalidOption}},
		{"CANCELED before sending", notSent(callerr.CtxCode(context.Canceled), "x", context.Canceled), CodeCanceled, OutcomeNotRun, false, []error{context.Canceled}},
		{"DEADLINE_EXCEEDED before sending", notSent(callerr.CtxCode(context.DeadlineExceeded), "x", context.DeadlineExceeded), CodeDeadlineExceeded, OutcomeNotRun, false, []error{context.DeadlineExceeded}},
		{"DEADLINE_EXCEEDED", callerr.SendError(ctx, nats.ErrTimeout, true), CodeDeadlineExceeded, OutcomeUnknown, true, []error{nats.ErrTimeout, context.DeadlineExceeded}},
		{"DEADLINE_EXCEEDED from the context", callerr.SendError(ctx, context.DeadlineExceeded, true), CodeDeadlineExceeded, OutcomeUnknown, true, []error{nats.ErrTimeout, context.DeadlineExceeded}},
		{"CANCELED while waiting", callerr.SendError(cancelled, context.Canceled, true), CodeCanceled, OutcomeUnknown, true, []error{context.Canceled}},
		{"UNAVAILABLE after sending", callerr.SendError(ctx, nats.ErrConnectionClosed, true), CodeUnavailable, OutcomeUnknown, true, []error{nats.ErrConnectionClosed}},
		{"remote PAYLOAD_TOO_LARGE", remote(reply(HeaderErrorCode, CodePayloadTooLarge, HeaderError, "big")), CodePayloadTooLarge, OutcomeUnknown, true, []error{ErrPayloadTooLarge, ErrReplyTooLarge}},
		{"remote INTERNAL", remote(reply(HeaderErrorCode, CodeInternal, HeaderError, "boom")), CodeInternal, OutcomeUnknown, true, nil},
		{"remote INTERNAL without a code", remote(reply(HeaderError, "boom")), CodeInternal, OutcomeUnknown, true, nil},
		{"remote INVALID_ARGUMENT", remote(reply(HeaderErrorCode, CodeInvalidArgument)), CodeInvalidArgument, OutcomeRejected, true, nil},
		{"remote 4xx", remote(reply(HeaderErrorCode, "404", HeaderError, "no such order")), "404", OutcomeRejected, true, nil},
		{"remote rejection with a custom code", remote(reply(HeaderErrorCode, "OUT_OF_STOCK", HeaderOutcome, outcomeRejected)), "OUT_OF_STOCK", OutcomeRejected, true, nil},
		{"remote 500", remote(reply(HeaderErrorCode, "500")), "500", OutcomeUnknown, true, nil},
		{"remote custom code", remote(reply(HeaderErrorCode, "CONFLICT")), "CONFLICT", OutcomeUnknown, true, nil},
		{"claimcheck: nothing published", Describe(fmt.Errorf("%w: upload failed", claimcheck.ErrNotPublished)), CodeInternal, OutcomeNotRun, false, []error{claimcheck.ErrNotPublished}},
		{"claimcheck: nothing published, no responders", Describe(fmt.Errorf("%w: %w", claimcheck.ErrNotPublished, nats.ErrNoResponders)), CodeNoResponders, OutcomeNotRun, false, []error{claimcheck.ErrNotPublished, nats.ErrNoResponders}},
		{"claimcheck: too large", Describe(fmt.Errorf("%w; %w", claimcheck.ErrNotPublished, claimcheck.ErrTooLarge)), CodePayloadTooLarge, OutcomeNotRun, false, []error{claimcheck.ErrTooLarge}},
		{"claimcheck: invalid option", Describe(fmt.Errorf("%w: x", claimcheck.ErrInvalidOption)), CodeInvalidArgument, OutcomeNotRun, false, []error{ErrInvalidOption}},
		{"claimcheck: closed", Describe(claimcheck.ErrClosed), CodeUnavailable, OutcomeNotRun, false, []error{claimcheck.ErrClosed, claimcheck.ErrNotPublished}},
		{"claimcheck: missing", Describe(&claimcheck.ResolveError{Err: claimcheck.ErrMissing}), CodeNotFound, OutcomeNotRun, false, []error{claimcheck.ErrMissing}},
		{"claimcheck: corrupt", Describe(&claimcheck.ResolveError{Err: claimcheck.ErrSubjectMismatch}), CodeDataLoss, OutcomeNotRun, false, []error{claimcheck.ErrCorrupt}},
		{"claimcheck: read timed out", Describe(&claimcheck.ResolveError{Err: context.DeadlineExceeded}), CodeDeadlineExceeded, OutcomeNotRun, false, []error{context.DeadlineExceeded}},
		{"claimcheck: may have been published", Describe(errors.New("ack lost")), CodeInternal, OutcomeUnknown, false, nil},
	} {
		t.Run(row.name, func(t *testing.T) {
			var e *Error
			if !errors.As(row.err, &e) {
				t.Fatalf("%v is not a *Error", row.err)
			}
			if e.Code != row.code || Classify(row.err) != row.outcome || e.Sent != row.sent {
				t.Fatalf("code %s, outcome %v, sent %v; want %s, %v, %v (%v)", e.Code, Classify(row.err), e.Sent, row.code, row.outcome, row.sent, row.err)
			}
			if MayHaveRun(row.err) != (row.outcome == OutcomeUnknown) {
				t.Fatalf("MayHaveRun = %v for %v", MayHaveRun(row.err), row.outcome)
			}
			for _, target := range row.is {
				if !errors.Is(row.err, target) {
					t.Errorf("errors.Is(%v, %v) is false", row.err, target)
				}
			}
			if row.outcome != OutcomeUnknown && errors.Is(row.err, ErrReplyTooLarge) {
				t.Errorf("%v matches ErrReplyTooLarge", row.err)
			}
		})
	}
	if Classify(nil) != OutcomeOK || !MayHaveRun(nil) {
		t.Error("nil must be OutcomeOK and may have run")
	}
	if Classify(errors.New("foreign")) != OutcomeUnknown {
		t.Error("a foreign error must be OutcomeUnknown")
	}
}
