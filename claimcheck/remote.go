package claimcheck

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// at is where a referenced object is stored: a bucket, and a JetStream
// domain ("" for the Store's own).
type at struct {
	bucket, domain string
}

// own returns where the Store's own objects are stored.
func (s *Store) own() at { return at{bucket: s.cfg.bucket} }

// jsIn returns a JetStream context for domain ("" for the Store's own),
// made once per domain and kept.
func (s *Store) jsIn(domain string) (jetstream.JetStream, error) {
	if domain == "" {
		return s.js, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if js, ok := s.domainJS[domain]; ok {
		return js, nil
	}
	js, err := jetstream.NewWithDomain(s.nc, domain)
	if err != nil {
		return nil, err
	}
	if s.domainJS == nil {
		s.domainJS = make(map[string]jetstream.JetStream)
	}
	s.domainJS[domain] = js
	return js, nil
}

// objectInfo returns the object name's info where loc says it is stored.
func (s *Store) objectInfo(ctx context.Context, loc at, name string, opts ...jetstream.GetObjectInfoOpt) (*jetstream.ObjectInfo, error) {
	if loc == s.own() {
		return s.obs.GetInfo(ctx, name, opts...)
	}
	js, err := s.jsIn(loc.domain)
	if err != nil {
		return nil, err
	}
	obs, err := js.ObjectStore(ctx, loc.bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, jetstream.ErrObjectNotFound // nothing stored there any more
	}
	if err != nil {
		return nil, err
	}
	return obs.GetInfo(ctx, name, opts...)
}

// streamAt returns the stream of the bucket loc names.
func (s *Store) streamAt(ctx context.Context, loc at) (jetstream.Stream, error) {
	if loc == s.own() {
		return s.stream, nil
	}
	js, err := s.jsIn(loc.domain)
	if err != nil {
		return nil, err
	}
	return js.Stream(ctx, streamName(loc.bucket))
}

// deleteObjectAt is deleteObject for an object stored where loc says (a
// reference that names another bucket or an allowed domain).
func (s *Store) deleteObjectAt(ctx context.Context, loc at, name string) error {
	ctx, stop := s.watchStream(ctx, loc)
	defer stop()
	err := s.readCall(ctx, func(ctx context.Context) error {
		info, err := s.objectInfo(ctx, loc, name, jetstream.GetObjectInfoShowDeleted())
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		st, err := s.streamAt(ctx, loc)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := st.Purge(ctx, jetstream.WithPurgeSubject(chunkSubject(loc.bucket, info.NUID))); err != nil {
			return err
		}
		return st.Purge(ctx, jetstream.WithPurgeSubject(metaSubjectOf(loc.bucket, name)))
	})
	return deniedError(ctx, "deleting the stored payload", err)
}

// refAt returns where a parsed reference says its object is (parse has
// refused a domain the Store may not read).
func (s *Store) refAt(ref *refInfo) at {
	return at{bucket: ref.bucket, domain: ref.domain}
}

// describeAt names loc for an error, when it is not the Store's own.
func (s *Store) describeAt(loc at) string {
	if loc == s.own() {
		return ""
	}
	if loc.domain == "" {
		return fmt.Sprintf(" in bucket %q", loc.bucket)
	}
	return fmt.Sprintf(" in bucket %q of JetStream domain %q", loc.bucket, loc.domain)
}
