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

// Deleting a stored object is three requests, each made on its own until
// it is answered: the meta data (which names the chunk subject), the
// purge of the chunks, the purge of the meta data. Each request has its
// own bound (cleanupRequestTimeout), never the sum: on a slow link (a
// leafnode to another domain with a round trip of a second) or a loaded
// server, a bound on the whole deletion would end it midway every time
// (issue 42: the chunks purged and the meta data left) and start it again
// from the beginning.

// cleanupRequestTimeout bounds one request of a clean-up: more than a
// round trip of a second (another domain across a slow leafnode) plus the
// server's work, well within the cleanup timeout.
const cleanupRequestTimeout = 3 * time.Second

// cleanupStep makes one request of a clean-up on loc's stream, each
// attempt bounded by cleanupRequestTimeout, again after a failure that
// says nothing about the request (a timeout, a reconnect, no responders
// while a stream leader is elected) until ctx ends. Another domain that
// answers "no responders" for remoteDomainWait is unreachable (its site is
// down): that ends the step, naming the domain. A permission violation
// that ended ctx (watchStream) ends it too.
func (s *Store) cleanupStep(ctx context.Context, loc at, step func(ctx context.Context) error) error {
	var unanswered time.Time // since when another domain has no responders
	for {
		if err := s.waitConnected(ctx); err != nil {
			return err
		}
		sent := time.Now()
		actx, cancel := context.WithTimeout(ctx, cleanupRequestTimeout)
		err := step(actx)
		cancel()
		switch {
		case err == nil, !transientRead(err), s.nc.IsClosed(), connlimit.DeniedCause(ctx) != nil:
			return err
		case loc.domain == "" || !errors.Is(err, nats.ErrNoResponders):
			unanswered = time.Time{}
		case unanswered.IsZero():
			unanswered = sent
		case time.Since(unanswered) >= remoteDomainWait:
			return fmt.Errorf("claimcheck: JetStream domain %q does not answer (its site is unreachable, or has no JetStream): %w", loc.domain, err)
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			if errors.Is(err, ctx.Err()) {
				return err
			}
			return fmt.Errorf("%w; %w", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// readerAt returns the direct-get reader of loc's bucket (through its
// domain's API when that is not the Store's own).
func (s *Store) readerAt(loc at) *objstore.Reader {
	return s.reader(&refInfo{bucket: loc.bucket, domain: loc.domain})
}

// storedMeta returns the meta data of object name where loc says, nil when
// none is stored (or the bucket is gone): a direct get, which any replica
// answers, and the stream leader's word when the replica has none (it may
// lag behind the upload). One step of a clean-up.
func (s *Store) storedMeta(ctx context.Context, loc at, name string) (*jetstream.ObjectInfo, error) {
	rd := s.readerAt(loc)
	subj := metaSubjectOf(loc.bucket, name)
	var m *objstore.Msg
	err := s.cleanupStep(ctx, loc, func(ctx context.Context) (err error) {
		m, err = rd.Last(ctx, subj) //natssend:reviewed retry: a read, no effect to repeat
		if errors.Is(err, objstore.ErrNotFound) || errors.Is(err, nats.ErrNoResponders) {
			m, err = rd.LeaderLast(ctx, subj) //natssend:reviewed retry: a read, no effect to repeat
		}
		return err
	})
	switch {
	case errors.Is(err, objstore.ErrNotFound), errors.Is(err, objstore.ErrNoStream):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var info jetstream.ObjectInfo
	if err := json.Unmarshal(m.Data, &info); err != nil {
		return nil, fmt.Errorf("claimcheck: malformed meta data of object %q: %w", name, err)
	}
	return &info, nil
}

// purgeAt purges subject from loc's stream, repeated until the stream's
// leader answers; a stream that is gone has nothing to purge. One step of
// a clean-up.
func (s *Store) purgeAt(ctx context.Context, loc at, subject string) error {
	rd := s.readerAt(loc)
	err := s.cleanupStep(ctx, loc, func(ctx context.Context) error {
		_, err := rd.Purge(ctx, subject) //natssend:reviewed retry: a purge of one subject, idempotent
		return err
	})
	if errors.Is(err, objstore.ErrNoStream) {
		return nil
	}
	return err
}

// deleteObjectAt deletes object name where loc says (the Store's own
// bucket, another bucket, an allowed domain): its chunks and its meta
// data (a delete marker too) are purged, one request at a time (see
// cleanupStep). Deleting is idempotent; an object that is not stored is
// no error. An error wraps errCleanupIncomplete: the object may stay
// until the bucket's TTL.
func (s *Store) deleteObjectAt(ctx context.Context, loc at, name string) error {
	ctx, stop := s.watchStream(ctx, loc)
	defer stop()
	info, err := s.storedMeta(ctx, loc, name)
	if err == nil && info != nil {
		err = s.removeObject(ctx, loc, name, info)
	}
	return incomplete(ctx, "deleting the stored payload", err)
}

// removeObject purges the chunks info names and the meta data of name,
// each its own step.
func (s *Store) removeObject(ctx context.Context, loc at, name string, info *jetstream.ObjectInfo) error {
	if err := s.purgeAt(ctx, loc, chunkSubject(loc.bucket, info.NUID)); err != nil {
		return err
	}
	return s.purgeAt(ctx, loc, metaSubjectOf(loc.bucket, name))
}

// discardObject is Discard's deletion of object name where loc says: it
// is refused (ErrSubjectMismatch) unless stored for subject, and nothing
// to do when not stored or deleted. ctx is the clean-up's.
func (s *Store) discardObject(ctx context.Context, loc at, name, subject string) error {
	ctx, stop := s.watchStream(ctx, loc)
	defer stop()
	info, err := s.storedMeta(ctx, loc, name)
	switch {
	case err != nil:
		return fmt.Errorf("claimcheck: discarding object %q%s: %w", name, s.describeAt(loc), incomplete(ctx, "reading its meta data", err))
	case info == nil || info.Deleted:
		return nil
	case info.Metadata[metaSubjectKey] != subject:
		return &ResolveError{Object: name, Subject: subject, Err: ErrSubjectMismatch, Detail: fmt.Sprintf("stored for %q", info.Metadata[metaSubjectKey])}
	}
	if err := s.removeObject(ctx, loc, name, info); err != nil {
		return fmt.Errorf("claimcheck: discarding object %q%s: %w", name, s.describeAt(loc), incomplete(ctx, "deleting the stored payload", err))
	}
	return nil
}

// errCleanupIncomplete is what every clean-up that did not finish wraps
// (a Discard, a delete after a read, the removal of an upload that was not
// published): what it was to remove may stay until the bucket's TTL. It
// is internal/objstore's, so that package shim can tell it without the
// public API growing.
var errCleanupIncomplete = objstore.ErrCleanupIncomplete

// incomplete returns err, a clean-up's failure at step, as the permission
// violation that ended ctx where there is one (deniedError), wrapping
// errCleanupIncomplete; nil for nil.
func incomplete(ctx context.Context, step string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", errCleanupIncomplete, deniedError(ctx, step, err))
}
