package claimcheck

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/objstore"
	"github.com/natssend/natssend/outcome"
)

// bindError is New's error: the bucket could not be created or bound, so
// no Store exists and nothing was stored or published. It says what is
// missing when the server's answer tells (no JetStream for the account,
// no bucket) and keeps the cause for errors.Is.
type bindError struct {
	msg string
	err error
}

func (e *bindError) Error() string { return e.msg }
func (e *bindError) Unwrap() error { return e.err }

// OutcomeCode implements outcome.Coder: nothing was stored or published
// (NotRun), for the reason its cause gives.
func (e *bindError) OutcomeCode() (string, outcome.Kind) { return "", outcome.NotRun }

// bindFailed builds New's error for a failed step on bucket.
func bindFailed(bucket, step string, err error) error {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrJetStreamNotEnabled):
		// Nothing answers on the JetStream API: the server runs without
		// JetStream, or the account has none (jetstream.New's requests get
		// no responders then), or the domain is not reachable.
		return &bindError{
			msg: fmt.Sprintf("claimcheck: %s %q: JetStream is not available to this connection (nothing answers on its JetStream API: enable JetStream on the server and for the account, or check the JetStream domain): %v", step, bucket, err),
			err: fmt.Errorf("%w; %w", jetstream.ErrJetStreamNotEnabled, err),
		}
	case errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount):
		return &bindError{
			msg: fmt.Sprintf("claimcheck: %s %q: JetStream is not enabled for this connection's account: %v", step, bucket, err),
			err: err,
		}
	case errors.As(err, &apiErr):
		return &bindError{msg: fmt.Sprintf("claimcheck: %s %q: the server refused: %v", step, bucket, err), err: err}
	}
	return &bindError{msg: fmt.Sprintf("claimcheck: %s %q: %v", step, bucket, err), err: err}
}

// watchDenied returns a context derived from ctx that ends as soon as the
// server reports a permission violation for a publish on one of pubs or
// refuses nats.go's response subscription (a JetStream request's reply
// subscription; connlimit.State.RespInbox), with stop to call when the wait is
// over; see connlimit.WatchDenied. Only connections made by shim.Connect
// report violations.
func (s *Store) watchDenied(ctx context.Context, pubs ...string) (context.Context, context.CancelFunc) {
	return s.limit.WatchDenied(ctx, pubs, []string{s.limit.RespInbox()})
}

// jsDomain returns the JetStream domain the Store's JetStream context
// reaches and whether it is known: the one the context was made with
// (jetstream.NewWithDomain), or else the account's, as the server states
// it ($JS.API.INFO). When the account information cannot be had (the user
// may not ask for it: the server's report ends the wait), the domain is
// unknown: references then name no domain (they mean the reader's own,
// as references always did) and uploads are checked against the bucket's
// stream only.
func (s *Store) jsDomain(ctx context.Context) (string, bool) {
	if d := s.js.Options().Domain; d != "" {
		return d, true
	}
	ctx, stop := s.watchDenied(ctx, objstore.APIPrefix(s.js)+"INFO")
	defer stop()
	var domain string
	err := s.bindCall(ctx, func(ctx context.Context) error {
		ai, err := s.js.AccountInfo(ctx)
		if err == nil {
			domain = ai.Domain
		}
		return err
	})
	return domain, err == nil
}
