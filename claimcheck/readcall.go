package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/objstore"
)

// readCallTimeout bounds one attempt of a JetStream API call a read makes
// (the object's info, creating its consumer, the stream's and the
// consumer's state). A request written just before the connection broke
// gets no answer: without its own bound it would wait out the whole read.
const readCallTimeout = 2 * time.Second

// readCall runs call, a JetStream API request that only reads (or creates
// a read's own ephemeral consumer, or deletes an object: idempotent), each
// attempt bounded by
// readCallTimeout, and runs it again after a failure that says nothing
// about the object (a timeout, a lost or reconnecting connection, no
// responders while a stream leader is elected) until ctx ends. Repeating
// such a call is safe: reads have no effect, and a consumer created twice
// is only an idle ephemeral one, which the server removes after its
// inactive threshold. An answer from the server (not found, an API error)
// and a closed connection are returned at once.
func (s *Store) readCall(ctx context.Context, call func(ctx context.Context) error) error {
	return s.callAgain(ctx, transientRead, call)
}

// callAgain is readCall with transient deciding which failures are made
// again.
func (s *Store) callAgain(ctx context.Context, transient func(error) bool, call func(ctx context.Context) error) error {
	remote, _ := ctx.Value(remoteDomainKey{}).(string)
	var silentSince time.Time // when the remote domain's answers stopped
	for {
		if err := s.waitConnected(ctx); err != nil {
			return err
		}
		bound := readCallTimeout
		if remote != "" {
			bound = remoteDomainWait
		}
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, bound)
		err := call(actx)
		cancel()
		if err == nil || !transient(err) || s.nc.IsClosed() {
			return err
		}
		if remote != "" && (errors.Is(err, nats.ErrNoResponders) || ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded)) {
			// Nothing answers for another domain: its site is unreachable
			// (a leafnode down: no responders, or no answer while the link's
			// loss is not yet known) or has no JetStream. Unlike the Store's
			// own domain, where no responders is a leader election that
			// ends, it is given remoteDomainWait.
			if silentSince.IsZero() {
				silentSince = start
			}
			if time.Since(silentSince) >= remoteDomainWait {
				return fmt.Errorf("claimcheck: JetStream domain %q does not answer (its site is unreachable, or has no JetStream): %w", remote, err)
			}
		} else {
			silentSince = time.Time{}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w; %w", ctx.Err(), err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; %w", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// transientRead reports whether a read call's error may go away when the
// call is made again: it timed out (its own bound, not the read's), the
// connection was lost or is reconnecting, or nothing answered.
func transientRead(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		// The server answered. "No suitable peers" and similar cluster
		// states after a failover are answers too, but pass: a new leader
		// is elected within the read's deadline.
		return apiErr.Code >= 500
	}
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, nats.ErrConnectionReconnecting)
}

// waitConnected waits until the connection is connected (not
// reconnecting), or ctx ends. A closed connection is an error at once.
func (s *Store) waitConnected(ctx context.Context) error {
	for {
		switch {
		case s.nc.IsClosed():
			return nats.ErrConnectionClosed
		case s.nc.IsConnected():
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// remoteDomainKey marks the context of a call on another JetStream
// domain's stream (see watchStream): readCall gives up on it after
// remoteDomainWait without an answer.
type remoteDomainKey struct{}

// remoteDomainWait is how long calls on another JetStream domain's stream
// get no answer ("no responders", or none at all) before the domain
// counts as unreachable; it also bounds each such call.
const remoteDomainWait = time.Second

// watchStream is watchDenied for the JetStream API calls a read, a delete
// or a clean-up makes on the stream of the bucket loc names (direct and
// leader gets, stream info, purge, message delete), plus pubs, and marks
// a call on another domain's stream (see remoteDomainKey): a call the
// user may not make gets no answer at all, so without the watch it would
// wait out its deadline and be retried until the read's or the clean-up's
// own. Only these subjects are watched: a denied call elsewhere on the
// connection (another bucket, a stream lookup the Store tolerates being
// refused) does not end this one.
func (s *Store) watchStream(ctx context.Context, loc at, pubs ...string) (context.Context, context.CancelFunc) {
	prefix := objstore.APIPrefix(s.js)
	if loc.domain != "" {
		prefix = "$JS." + loc.domain + ".API."
		ctx = context.WithValue(ctx, remoteDomainKey{}, loc.domain)
	}
	stream := streamName(loc.bucket)
	return s.watchDenied(ctx, append(pubs,
		prefix+"DIRECT.GET."+stream, prefix+"DIRECT.GET."+stream+".>",
		prefix+"STREAM.MSG.GET."+stream, prefix+"STREAM.INFO."+stream,
		prefix+"STREAM.PURGE."+stream, prefix+"STREAM.MSG.DELETE."+stream)...)
}

// deniedError returns err as the permission violation that ended ctx
// (made by watchStream or watchDenied), naming what was refused and what
// the step was, when one did; err otherwise.
func deniedError(ctx context.Context, step string, err error) error {
	d := connlimit.DeniedCause(ctx)
	if err == nil || d == nil {
		return err
	}
	return fmt.Errorf("claimcheck: %s: %w", step, d)
}
