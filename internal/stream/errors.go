// Package stream is natssend's transfer stream engine (docs/protocol.md,
// 6): frames, credit and windows, acknowledgements, resends, heartbeats
// and keepalives, the idle bound, the end and error frames and their
// digest, the responder's bound on held frames, for both sides: the
// caller's Receiver and the responder's Sender, over internal/xfer's pure
// rules. Package shim's ReplyStream and StreamWriter are thin wrappers
// over them; this package needs a *nats.Conn and a connlimit.State, not
// a shim.Client.
package stream

import (
	"context"
	"errors"
	"io"

	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/outcome"
)

// Errors of transfer streams, for errors.Is (re-exported by shim as
// ErrStreamClosed, ErrStreamIdle, ...: the same values).
var (
	// ErrClosed: Read after Close, or Write/Flush after the handler
	// returned.
	ErrClosed = errors.New("natssend: stream closed")
	// ErrIdle: the responder sent nothing (no frame, no heartbeat) for
	// the stream's idle bound.
	ErrIdle = errors.New("natssend: the responder of the stream went silent")
	// ErrLost: frames were lost and the responder did not send them again
	// within the stream's idle bound.
	ErrLost = errors.New("natssend: stream frames lost and not sent again")
	// ErrCorrupt: the end frame's digest does not match the bytes
	// received.
	ErrCorrupt = errors.New("natssend: stream digest mismatch")
	// ErrCanceled is the cause of a responder's context when the caller
	// closed the stream.
	ErrCanceled = errors.New("natssend: the caller closed the stream")
	// ErrCallerGone is the cause of a responder's context when the
	// caller's side went away without closing.
	ErrCallerGone = errors.New("natssend: the caller of the stream is gone")
	// ErrProtocol: the stream's peer broke the frame protocol.
	ErrProtocol = errors.New("natssend: the stream's peer broke the frame protocol")
)

// brokenError is the error of a stream cut short by cause.
func brokenError(msg string, cause error) error {
	return outcome.MayHaveRunError(outcome.CodeStreamBroken, msg, errors.Join(io.ErrUnexpectedEOF, cause))
}

// ctxStreamError is the error of a stream cut by its context.
func ctxStreamError(err error) error {
	msg := "the stream's deadline passed before its end"
	if err == context.Canceled {
		msg = "the stream's context was cancelled before its end"
	}
	return outcome.MayHaveRunError(callerr.CtxCode(err), msg, errors.Join(err, io.ErrUnexpectedEOF))
}
