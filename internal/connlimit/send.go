package connlimit

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"
)

// MaxDecisions bounds how often one send decides again after nats.go
// refused it with nats.ErrMaxPayload because the link changed between the
// decision and the send (nothing was written). Each new decision waits for
// the new link's limit, so more than two are rare.
const MaxDecisions = 8

// Send is one message on its way out, for State.Send.
type Send struct {
	// Decide gives the verdict for the message against the link's limit.
	// It may rebuild the message (a header whose value depends on the
	// time left), which Write then sends.
	Decide func(limit int64) Verdict
	// Write sends the message. Its error says what it proves: see
	// Unwritten.
	Write func() error
	// Again, when set, names more errors of Write after which nothing was
	// written or stored and the decision is taken again (a JetStream
	// stream's size refusal, say). nats.ErrMaxPayload always is.
	Again func(err error) bool
}

// ErrNotSent is matched (errors.Is) by every error State.Send returns
// without calling Write: the limit could not be had (the connection
// closed or reconnecting, ctx done while waiting for it), or ctx was done
// before the write. Nothing of the message was written.
var ErrNotSent = errors.New("natssend: not sent")

type notSent struct{ err error }

func (e *notSent) Error() string        { return e.err.Error() }
func (e *notSent) Unwrap() error        { return e.err }
func (e *notSent) Is(target error) bool { return target == ErrNotSent }

// Send is the one send loop of natssend, which every sender goes through
// after its input checks: it waits for the connection's limit, asks
// m.Decide, and when the message fits calls the before-send hook (see
// SetBeforeSend) and m.Write, unless ctx is already done (nats.go would
// return ctx's error without writing anything; Send says so with
// ErrNotSent instead). When Write fails with nats.ErrMaxPayload (the link
// changed between the decision and the send, nothing was written) or an
// error m.Again names, it decides again on the new limit, at most
// MaxDecisions times in all.
//
// It returns the last verdict, the limit it was made against and Write's
// error. For a verdict other than Fits nothing was sent and the error is
// nil: the sender makes a claim check or refuses.
func (s *State) Send(ctx context.Context, m Send) (Verdict, int64, error) {
	for decision := 1; ; decision++ {
		limit, err := s.Limit(ctx)
		if err != nil {
			return Refuse, 0, &notSent{err}
		}
		if v := m.Decide(limit); v != Fits {
			return v, limit, nil
		}
		s.BeforeSend()
		if err := ctx.Err(); err != nil {
			return Fits, limit, &notSent{err}
		}
		err = m.Write()
		if err != nil && decision < MaxDecisions && (errors.Is(err, nats.ErrMaxPayload) || m.Again != nil && m.Again(err)) {
			s.Redecided()
			continue
		}
		return Fits, limit, err
	}
}

// Unwritten reports whether err, from a nats.go publish or request, is one
// that nats.go returns only before anything of the message is written to
// the connection: ErrNotSent, a refused argument, a size over the limit
// it holds, or a connection that cannot take the message now
// (reconnecting without a buffer, draining). Any error of a plain publish
// is (nats.go's publish only buffers the message; the flusher writes it),
// but a request's can come after the request went out.
func Unwritten(err error) bool {
	for _, target := range []error{
		ErrNotSent, nats.ErrBadSubject, nats.ErrBadHeaderMsg, nats.ErrInvalidMsg, nats.ErrInvalidContext,
		nats.ErrInvalidConnection, nats.ErrHeadersNotSupported, nats.ErrMaxPayload,
		nats.ErrReconnectBufExceeded, nats.ErrConnectionDraining,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// Exact is Send's fast path for a message whose only question is
// whether it fits the connection's limit (no cap, no reserve). On a
// guarded connection (see Guarded) the limit nats.go checks against under
// its connection lock, atomically with the write, is never above the one
// the server enforces, so nats.go's own check is the decision: the sender
// calls BeforeSend and writes, and passes a write error to Refused. ok is
// false when the connection is not guarded: the sender goes through Send.
// link is the current link (see Link), for Refused. With a path cap
// (SetPathCap) ok is false: nats.go does not know the cap.
//
// It is a check and not a function taking the write, so that the hot path
// makes no indirect call.
func (s *State) Exact() (link uint64, ok bool) {
	if s.d == nil || !s.d.guarded() || s.pathCap.Load() != 0 {
		return 0, false
	}
	return s.d.dials.Load(), true
}

// Refused reports whether err, from a write after Exact, is nats.go's
// refusal of the message for its size (nats.ErrMaxPayload, nothing
// written): the sender then goes through Send, which waits for the link's
// limit and decides. A refusal because a new link's placeholder limit was
// in force (the link is no longer the one Exact returned) counts as a
// decision taken again. Any other error is the send's own.
func (s *State) Refused(link uint64, err error) bool {
	if !errors.Is(err, nats.ErrMaxPayload) {
		return false
	}
	if s.Link() != link {
		s.Redecided()
	}
	return true
}
