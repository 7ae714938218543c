// Package callerr builds the errors shim and the stream engine
// (internal/stream) both return, in package outcome's vocabulary: a
// nats.go error after or before a send, a size refusal, an invalid
// message, a context's end. Each decision is written once, here.
package callerr

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/wire"
	"github.com/natssend/natssend/outcome"
)

// TooLarge builds a local size refusal; the cause keeps nats.ErrMaxPayload.
func TooLarge(what string, size, limit int64, cause error) *outcome.Error {
	if cause == nil {
		cause = nats.ErrMaxPayload
	}
	e := outcome.NotRunError(outcome.CodePayloadTooLarge, fmt.Sprintf("%s of %d bytes exceeds the %d-byte limit; not sent", what, size, limit), cause)
	e.Size, e.Limit = size, limit
	return e
}

// SendError maps an error from nats.go (its code: outcome.CodeOf, the one
// table). sent says whether the message had been handed to the
// connection when the error arose: when it had not, nothing can have run,
// whatever the error; when it had, only errors that prove non-delivery
// (no responders) are outcome.NotRun. ctx (nil allowed) is the caller's
// context, to tell a cancellation from the deadline.
func SendError(ctx context.Context, err error, sent bool) error {
	if err == nil {
		return nil
	}
	var e *outcome.Error
	if errors.As(err, &e) {
		return err
	}
	if sent && connlimit.Unwritten(err) {
		// nats.go returns these only before it writes anything.
		sent = false
	}
	code := outcome.CodeOf(err)
	cancelled := errors.Is(err, context.Canceled) || (ctx != nil && errors.Is(ctx.Err(), context.Canceled))
	if cancelled && (code == outcome.CodeInternal || code == outcome.CodeDeadlineExceeded) {
		// The caller's cancellation, whatever nats.go made of it.
		code = outcome.CodeCanceled
	}
	var msg string
	switch code {
	case outcome.CodePermissionDenied:
		var d *connlimit.Denial
		if sent && errors.As(err, &d) && d.Op == "subscribe" {
			// The request went out; its reply cannot come back.
			return outcome.MayHaveRunError(outcome.CodePermissionDenied, "permission denied for the reply subscription after sending; it may have run", err)
		}
		// The server dropped the message: nothing ran.
		return outcome.NotRunError(outcome.CodePermissionDenied, "permission denied; not delivered", err)
	case outcome.CodeNoResponders:
		e := outcome.NotRunError(outcome.CodeNoResponders, "no responders on the subject; not delivered", err)
		e.Sent = true
		return e
	case outcome.CodePayloadTooLarge:
		msg = "message exceeds the connection's max_payload"
	case outcome.CodeUnavailable:
		msg = "connection lost"
		if errors.Is(err, nats.ErrReconnectBufExceeded) || errors.Is(err, nats.ErrConnectionReconnecting) {
			msg = "connection is reconnecting"
			if !errors.Is(err, nats.ErrConnectionReconnecting) {
				err = fmt.Errorf("%w; %w", nats.ErrConnectionReconnecting, err)
			}
		}
	case outcome.CodeInvalidArgument:
		msg = "invalid message"
	case outcome.CodeCanceled:
		msg = "cancelled"
		if ctx != nil && !errors.Is(err, context.Canceled) {
			err = fmt.Errorf("%w; %w", ctx.Err(), err)
		}
	case outcome.CodeDeadlineExceeded:
		msg = "deadline exceeded"
		if sent {
			msg = "no reply before the deadline"
		}
		err = fmt.Errorf("%w; %w", nats.ErrTimeout, context.DeadlineExceeded)
	default:
		msg = "failed"
	}
	if !sent {
		return outcome.NotRunError(code, msg+"; not sent", err)
	}
	return outcome.MayHaveRunError(code, msg+" after sending; it may have run", err)
}

// CtxCode is the code of a context's end: CANCELED or DEADLINE_EXCEEDED.
func CtxCode(err error) string {
	if err == context.Canceled {
		return outcome.CodeCanceled
	}
	return outcome.CodeDeadlineExceeded
}

// CheckMsg is wire.CheckMsg, natssend's one input check, as a
// *outcome.Error (INVALID_ARGUMENT, not run).
func CheckMsg(subject, reply string, h nats.Header) error {
	return InvalidMsg(wire.CheckMsg(subject, reply, h))
}

// InvalidMsg turns a *wire.CheckError into a *outcome.Error:
// INVALID_ARGUMENT, not run, with nats.go's error as its cause.
func InvalidMsg(err error) error {
	if err == nil {
		return nil // the hot path: no errors.As, whose target escapes
	}
	var ce *wire.CheckError
	if !errors.As(err, &ce) {
		return err
	}
	return outcome.NotRunError(outcome.CodeInvalidArgument, ce.Msg+"; not sent", ce.Err)
}
