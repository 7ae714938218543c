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
	"github.com/natssend/natssend/internal/objstore"
)

// purgeUpload removes a partial upload: it makes sure the stream has
// processed every chunk this connection sent before (a synchronous
// publish on the chunk subject: the connection delivers in order and the
// stream stores messages in the order it receives them; nats.go no longer
// resends any of the upload's publishes, see noRetry), then purges the
// chunk subject and, when the meta message may have been sent, the meta
// subject (with once, a chosen name, only its own meta message:
// deleteMetaOf), each request on its own until it is answered (see
// cleanupStep), and finally asks the stream's leader whether any chunk
// is still stored (verifyPurged), purging again until none is. On a
// closed connection it gives up at once, since nothing can be sent any
// more (the bucket's TTL removes the leftovers). moved says that the
// connection reconnected during the upload. An error that is not the
// bucket's stream being gone (jetstream.ErrStreamNotFound) wraps
// errCleanupIncomplete.
func (s *Store) purgeUpload(ctx context.Context, chunkSubj, metaSubj, id string, once, metaSent, moved bool) error {
	cctx, cancel := s.cleanupContext(ctx)
	defer cancel()
	// A clean-up the user may not make (no purge permission) ends at the
	// server's report: the bucket's TTL removes the leftovers.
	cctx, stop := s.watchStream(cctx, s.own(), chunkSubj)
	defer stop()
	err := s.removeUpload(cctx, chunkSubj, metaSubj, id, once, metaSent, moved)
	switch {
	case err == nil || errors.Is(err, jetstream.ErrStreamNotFound):
		return err
	case errors.Is(err, nats.ErrConnectionClosed) || s.nc.IsClosed() || connlimit.DeniedCause(cctx) != nil:
		return fmt.Errorf("%w (the bucket's TTL removes the partial upload)", incomplete(cctx, "removing the partial upload", err))
	}
	return incomplete(cctx, "removing the partial upload", err)
}

// removeUpload is purgeUpload's work, one step at a time.
func (s *Store) removeUpload(ctx context.Context, chunkSubj, metaSubj, id string, once, metaSent, moved bool) error {
	own := s.own()
	err := s.cleanupStep(ctx, own, func(ctx context.Context) error {
		_, err := s.pub.PublishMsg(ctx, &nats.Msg{Subject: chunkSubj}) //natssend:reviewed retry: an empty marker the purge that follows removes, so a second one is harmless
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) {
			// Nothing stores the chunk subject: unless a stream leader is
			// being elected, the bucket's stream is gone, and with it
			// whatever was written.
			if _, serr := s.rd.AllowsDirect(ctx); errors.Is(serr, objstore.ErrNoStream) {
				return jetstream.ErrStreamNotFound
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := s.verifyPurged(ctx, chunkSubj, moved); err != nil {
		return err
	}
	switch {
	case !metaSent:
		return nil
	case once:
		return s.deleteMetaOf(ctx, metaSubj, id) // another responder's may be the one stored
	}
	return s.purgeAt(ctx, own, metaSubj) // a random name: ours
}

// verifyPurged purges the chunk subject until the stream's leader says it
// holds none of its messages. After a reconnect (moved) it asks
// purgeSettle after the purge: chunks that the server the connection was
// on had forwarded (a server shut down flushes its routes as it closes)
// can reach the stream after the purge, by another path than the one the
// purge took. A stream that is gone holds nothing.
func (s *Store) verifyPurged(ctx context.Context, chunkSubj string, moved bool) error {
	own := s.own()
	for pause := moved; ; pause = true {
		if err := s.purgeAt(ctx, own, chunkSubj); err != nil {
			return err
		}
		if pause {
			t := time.NewTimer(purgeSettle)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		var n uint64
		err := s.cleanupStep(ctx, own, func(ctx context.Context) (err error) {
			n, err = s.rd.Stored(ctx, chunkSubj) //natssend:reviewed retry: a read, no effect to repeat
			return err
		})
		switch {
		case errors.Is(err, objstore.ErrNoStream):
			return nil
		case err != nil:
			return err
		case n == 0:
			return nil
		}
		// Chunks arrived after the purge, by another path: purge them and
		// give that path time again.
	}
}

// purgeSettle is how long after a purge that followed a reconnect the
// stream is asked again whether chunks of the upload arrived.
const purgeSettle = 500 * time.Millisecond

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
		return fmt.Errorf("%w: still removing the partial upload in the background when the context ended (for up to %v)", errCleanupIncomplete, s.cfg.cleanupTimeout)
	}
}

// deleteMetaOf deletes the meta message on metaSubj if it is that of the
// upload id (the object's NUID): with a chosen name another responder's
// meta message may be the one stored, and it stays. Two steps (see
// cleanupStep): the stream leader's last message on the subject, then
// its deletion.
func (s *Store) deleteMetaOf(ctx context.Context, metaSubj, id string) error {
	own := s.own()
	var m *objstore.Msg
	err := s.cleanupStep(ctx, own, func(ctx context.Context) (err error) {
		m, err = s.rd.LeaderLast(ctx, metaSubj) //natssend:reviewed retry: a read, no effect to repeat
		return err
	})
	if errors.Is(err, objstore.ErrNotFound) || errors.Is(err, objstore.ErrNoStream) {
		return nil
	}
	if err != nil {
		return err
	}
	var info jetstream.ObjectInfo
	if json.Unmarshal(m.Data, &info) == nil && info.NUID != id {
		return nil
	}
	err = s.cleanupStep(ctx, own, func(ctx context.Context) error {
		return s.stream.DeleteMsg(ctx, m.Seq)
	})
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
