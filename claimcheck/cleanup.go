package claimcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/connlimit"
)

// purgeAttemptTimeout bounds one attempt of purgeUpload.
const purgeAttemptTimeout = 2 * time.Second

// purgeUpload removes a partial upload: it makes sure the stream has
// processed every chunk this connection sent before (a synchronous
// publish on the chunk subject: the connection delivers in order and the
// stream stores messages in the order it receives them; nats.go no longer
// resends any of the upload's publishes, see noRetry), then purges the
// chunk subject and, when the meta message may have been sent, the meta
// subject (with once, a chosen name, only its own meta message:
// deleteMetaOf). Transient failures (a reconnect) are retried, each
// attempt bounded by purgeAttemptTimeout, until the cleanup timeout; on a
// closed connection it gives up at once, since nothing can be sent any
// more (the bucket's TTL removes the leftovers).
func (s *Store) purgeUpload(ctx context.Context, chunkSubj, metaSubj, id string, once, metaSent bool) error {
	cctx, cancel := s.cleanupContext(ctx)
	defer cancel()
	// A clean-up the user may not make (no purge permission) ends at the
	// server's report: the bucket's TTL removes the leftovers.
	cctx, stop := s.watchStream(cctx, s.own(), chunkSubj)
	defer stop()
	var err error
	for {
		if err = s.waitConnected(cctx); err == nil {
			// Each attempt gets a bound of its own: a request written just
			// before the connection broke gets no answer, and must not use
			// up the whole cleanup budget.
			actx, acancel := context.WithTimeout(cctx, purgeAttemptTimeout)
			_, err = s.pub.PublishMsg(actx, &nats.Msg{Subject: chunkSubj})
			if err == nil {
				err = s.stream.Purge(actx, jetstream.WithPurgeSubject(chunkSubj))
			}
			switch {
			case err != nil || !metaSent:
			case once:
				err = s.deleteMetaOf(actx, metaSubj, id) // another responder's may be the one stored
			default:
				err = s.stream.Purge(actx, jetstream.WithPurgeSubject(metaSubj)) // a random name: ours
			}
			acancel()
		}
		if err == nil {
			return nil
		}
		if errors.Is(err, nats.ErrConnectionClosed) || s.nc.IsClosed() || connlimit.DeniedCause(cctx) != nil {
			return fmt.Errorf("%w (the bucket's TTL removes the partial upload)", deniedError(cctx, "removing the partial upload", err))
		}
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) {
			// Nothing stores the chunk subject: unless a stream leader is
			// being elected, the bucket's stream is gone, and with it
			// whatever was written.
			if _, serr := s.js.Stream(cctx, streamName(s.cfg.bucket)); errors.Is(serr, jetstream.ErrStreamNotFound) {
				return serr
			}
		}
		select {
		case <-cctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// cleanUp runs clean, the removal of what a failed upload wrote, on a
// context bounded by the cleanup timeout that ctx's end does not cancel,
// and waits for it while ctx lasts: the caller's deadline bounds the
// whole publish, clean-up included. A clean-up still running when ctx
// ends goes on in the background (until the cleanup timeout), and the
// error says so.
func (s *Store) cleanUp(ctx context.Context, clean func(ctx context.Context) error) error {
	cctx, cancel := s.cleanupContext(ctx)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		done <- clean(cctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	select {
	case err := <-done: // finished meanwhile
		return err
	default:
		return fmt.Errorf("still removing the partial upload in the background when the context ended (for up to %v)", s.cfg.cleanupTimeout)
	}
}

// deleteMetaOf deletes the meta message on metaSubj if it is that of the
// upload id (the object's NUID): with a chosen name another responder's
// meta message may be the one stored, and it stays.
func (s *Store) deleteMetaOf(ctx context.Context, metaSubj, id string) error {
	m, err := s.stream.GetLastMsgForSubject(ctx, metaSubj)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var info jetstream.ObjectInfo
	if json.Unmarshal(m.Data, &info) == nil && info.NUID != id {
		return nil
	}
	err = s.stream.DeleteMsg(ctx, m.Sequence)
	if errors.Is(err, jetstream.ErrMsgNotFound) || errors.Is(err, jetstream.ErrMsgDeleteUnsuccessful) {
		return nil // gone meanwhile (the bucket's TTL)
	}
	return err
}

// deleteObject removes a stored object of the Store's own bucket that no
// reference points to: its chunks and its meta message are purged,
// leaving no delete marker. Deleting is idempotent: each step is repeated
// after a transient failure (a restart, a lost link) within ctx.
func (s *Store) deleteObject(ctx context.Context, name string) error {
	return s.deleteObjectAt(ctx, s.own(), name)
}
