// Package errflow holds retries whose error flow goes through switches, // want package:"uses nats.go"
// type switches, shim outcomes, wrapping and predicates.
package errflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"errpreds"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/natssend/natssend/shim"
)

// A switch on the error: case nil leaves, any other error loops.
func switchOnErr(nc *nats.Conn, req []byte) (*nats.Msg, error) { // want switchOnErr:`sends via \(\*nats\.Conn\)\.Request`
	for i := 0; i < 3; i++ {
		reply, err := nc.Request("svc", req, time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure`
		switch err {
		case nil:
			return reply, nil
		case nats.ErrConnectionClosed:
			return nil, err
		}
	}
	return nil, errors.New("gave up")
}

// Near miss: only no responders loops.
func switchOnErrSafe(nc *nats.Conn, req []byte) (*nats.Msg, error) { // want switchOnErrSafe:`sends via \(\*nats\.Conn\)\.Request`
	for i := 0; i < 3; i++ {
		reply, err := nc.Request("svc", req, time.Second)
		switch err {
		case nil:
			return reply, nil
		case nats.ErrNoResponders:
			time.Sleep(time.Second)
			continue
		default:
			return nil, err
		}
	}
	return nil, errors.New("nobody listening")
}

// A type switch with case nil.
func typeSwitch(ctx context.Context, js jetstream.JetStream, data []byte) error { // want typeSwitch:`sends via \(jetstream\.Publisher\)\.Publish`
	for {
		_, err := js.Publish(ctx, "orders", data) // want `call of \(jetstream.Publisher\).Publish is retried on failure`
		switch e := err.(type) {
		case nil:
			return nil
		case *jetstream.APIError:
			return fmt.Errorf("stream said %d", e.ErrorCode)
		default:
			continue
		}
	}
}

// Near miss: the API error loops only when the stream refused the message
// for a wrong last sequence (optimistic concurrency: re-read, publish again).
func typeSwitchRefused(ctx context.Context, js jetstream.JetStream, next func() ([]byte, uint64)) error { // want typeSwitchRefused:`sends via \(jetstream\.Publisher\)\.Publish`
	for {
		data, seq := next()
		_, err := js.Publish(ctx, "ledger", data, jetstream.WithExpectLastSequence(seq))
		switch e := err.(type) {
		case nil:
			return nil
		case *jetstream.APIError:
			if e.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
				continue
			}
			return e
		default:
			return err
		}
	}
}

// Optimistic concurrency with errors.As and the error code, the body kept.
func casAppend(ctx context.Context, js jetstream.JetStream, data []byte, seq uint64) error { // want casAppend:`sends via \(jetstream\.Publisher\)\.Publish`
	for i := 0; i < 5; i++ {
		_, err := js.Publish(ctx, "ledger", data, jetstream.WithExpectLastSequence(seq))
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
			continue
		}
		return err
	}
	return errors.New("contended")
}

// Near miss of casAppend: another error code (stream not found) may
// follow nothing, but the analyzer only trusts codes by which the stream
// refused the message.
func casAppendOtherCode(ctx context.Context, js jetstream.JetStream, data []byte) error { // want casAppendOtherCode:`sends via \(jetstream\.Publisher\)\.Publish`
	for i := 0; i < 5; i++ {
		_, err := js.Publish(ctx, "ledger", data) // want `call of \(jetstream.Publisher\).Publish is retried on failure`
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamNotFound {
			continue
		}
		if err != nil {
			continue
		}
		return nil
	}
	return errors.New("gave up")
}

// errors.Is with the jetstream sentinel for a message over max_msg_size.
func tooBigLoops(ctx context.Context, js jetstream.JetStream, data []byte) error { // want tooBigLoops:`sends via \(jetstream\.Publisher\)\.Publish`
	for len(data) > 0 {
		_, err := js.Publish(ctx, "blobs", data)
		if errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum) {
			continue
		}
		return err
	}
	return nil
}

// switch shim.Classify(err).
func classifySwitch(ctx context.Context, c *shim.Client, req []byte) (*nats.Msg, error) { // want classifySwitch:`sends via \(\*shim\.Client\)\.Request`
	for {
		reply, err := c.Request(ctx, "svc", req) // want `call of \(\*shim.Client\).Request is retried on failure`
		switch shim.Classify(err) {
		case shim.OutcomeOK:
			return reply, nil
		case shim.OutcomeUnknown:
			continue
		default:
			return nil, err
		}
	}
}

// Near miss: an outcome variable; only OutcomeNotRun loops.
func classifyVar(ctx context.Context, c *shim.Client, req []byte) (*nats.Msg, error) { // want classifyVar:`sends via \(\*shim\.Client\)\.Request`
	for {
		reply, err := c.Request(ctx, "svc", req)
		outcome := shim.Classify(err)
		if outcome == shim.OutcomeNotRun {
			continue
		}
		return reply, err
	}
}

// The outcome variable in a switch, looping on an unknown outcome.
func classifyVarSwitch(ctx context.Context, c *shim.Client, req []byte) error { // want classifyVarSwitch:`sends via \(\*shim\.Client\)\.Request`
	for {
		_, err := c.Request(ctx, "svc", req) // want `call of \(\*shim.Client\).Request is retried on failure`
		switch o := shim.Classify(err); o {
		case shim.OutcomeUnknown:
			continue
		default:
			return err
		}
	}
}

// Wrapped with %w, errors.Is still sees no responders.
func wrappedSafe(nc *nats.Conn, data []byte) error { // want wrappedSafe:`sends via \(\*nats\.Conn\)\.Request`
	for {
		_, err := nc.Request("svc", data, time.Second)
		if err != nil {
			err = fmt.Errorf("calling svc: %w", err)
			if errors.Is(err, nats.ErrNoResponders) {
				continue
			}
			return err
		}
		return nil
	}
}

// Near miss: wrapped, then looping on a timeout.
func wrappedTimeout(nc *nats.Conn, data []byte) error { // want wrappedTimeout:`sends via \(\*nats\.Conn\)\.Request`
	for {
		_, err := nc.Request("svc", data, time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure`
		if err != nil {
			err = fmt.Errorf("calling svc: %w", err)
			if errors.Is(err, nats.ErrTimeout) {
				continue
			}
			return err
		}
		return nil
	}
}

func isNoResponders(err error) bool { return errors.Is(err, nats.ErrNoResponders) } // want isNoResponders:`true only when nothing was delivered`

func isRetryable(err error) bool { return errors.Is(err, nats.ErrTimeout) || isNoResponders(err) }

// A predicate of this package true only for no responders.
func localPredicate(nc *nats.Conn, data []byte) error { // want localPredicate:`sends via \(\*nats\.Conn\)\.Request`
	for {
		_, err := nc.Request("svc", data, time.Second)
		if isNoResponders(err) {
			continue
		}
		return err
	}
}

// Near miss: a predicate that is true for timeouts too.
func localPredicateTimeout(nc *nats.Conn, data []byte) error { // want localPredicateTimeout:`sends via \(\*nats\.Conn\)\.Request`
	for {
		_, err := nc.Request("svc", data, time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure`
		if isRetryable(err) {
			continue
		}
		return err
	}
}

// A predicate of another package, known through its fact.
func importedPredicate(nc *nats.Conn, data []byte) error { // want importedPredicate:`sends via \(\*nats\.Conn\)\.Publish`
	for {
		err := nc.Publish("evt", data)
		if errpreds.NotDelivered(err) {
			continue
		}
		return err
	}
}

// Near miss: the other package's broader predicate.
func importedPredicateTransient(nc *nats.Conn, data []byte) error { // want importedPredicateTransient:`sends via \(\*nats\.Conn\)\.Request`
	for {
		_, err := nc.Request("svc", data, time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure`
		if errpreds.Transient(err) {
			continue
		}
		return err
	}
}

// A success path ended by another package's function that does not return.
func publishThenExit(nc *nats.Conn, data []byte) { // want publishThenExit:`sends via \(\*nats\.Conn\)\.Publish`
	for {
		if err := nc.Publish("final", data); err == nil { // want `call of \(\*nats.Conn\).Publish is retried on failure`
			errpreds.Die("done")
		}
	}
}
