package claimcheck

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/connlimit"
)

// at is where a referenced object is stored: a bucket, and a JetStream
// domain ("" for the Store's own).
type at struct {
	bucket, domain string
}

// own returns where the Store's own objects are stored.
func (s *Store) own() at { return at{bucket: s.cfg.bucket} }

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

// deleteProbe is the server's verdict on whether the Store's user may
// delete payloads: err is the refusal, nil when it may.
type deleteProbe struct{ err error }

// canDelete reports whether the Store's user may delete payloads from its
// bucket (purge its subjects), which RPC overflow needs: its caller
// deletes both payloads of every call, and without the permission they
// would stay until the bucket's TTL while the call succeeds. It asks once
// (a purge of a subject nothing is stored under) and keeps the verdict;
// on a connection that does not report violations (not made by
// shim.Connect), or when the server does not answer in time, it says
// nothing (nil) and asks again next time.
func (s *Store) canDelete(ctx context.Context) error {
	s.mu.Lock()
	p := s.delProbe
	s.mu.Unlock()
	if p != nil {
		return p.err
	}
	if !s.limit.Hooked() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, readCallTimeout)
	defer cancel()
	ctx, stop := s.watchStream(ctx, s.own())
	defer stop()
	err := s.stream.Purge(ctx, jetstream.WithPurgeSubject(chunkSubject(s.cfg.bucket, newName())))
	d := connlimit.DeniedCause(ctx)
	switch {
	case d != nil:
		p = &deleteProbe{err: fmt.Errorf("claimcheck: this Store's user may not delete payloads from bucket %q, which RPC overflow does after every call (see docs/permissions.md): %w", s.cfg.bucket, d)}
	case err == nil:
		p = &deleteProbe{}
	default:
		return nil // no verdict
	}
	s.mu.Lock()
	s.delProbe = p
	s.mu.Unlock()
	return p.err
}
