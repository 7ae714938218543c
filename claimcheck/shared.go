package claimcheck

import (
	"context"

	"github.com/nats-io/nats.go"
)

// Concurrent Resolves of one claim check on one Store share one read: a
// message fanned out to many subscriptions of one process (a gateway
// serving many clients, several handlers of one event) is read from the
// server once, not once per subscription.
//
// The read runs on its own goroutine with a context that carries the
// first caller's values but none of its deadline or cancellation: each
// caller waits within its own deadline (its context's, or the read
// timeout from its own call) and gives up alone, and the read is
// cancelled once every caller waiting for it has given up, so it lasts
// as long as the longest-waiting caller's deadline, as a read of its own
// would. Every caller but one gets a copy of the payload; the last one
// to take it gets the read's buffer, so a lone caller pays no copy. A
// failure is every waiting caller's (each gets its own copy of the
// *ResolveError): the read was the same. A panic on the read's goroutine
// (a WithSubjectMatch function's, which runs once per read) is raised
// again, with the same value, in every waiting caller, where a recover
// of the caller's can stop it, as when the read ran on its goroutine; a
// runtime.Goexit there fails every waiting caller's read (errReadExited).

// readKey names what a shared read reads and checks: the object, its
// declared size and the subject its binding is checked against.
type readKey struct {
	bucket, domain, name, subject string
	size                          int64
}

// sharedRead is one read that callers wait for.
type sharedRead struct {
	done   chan struct{} // closed once data and err are set
	data   []byte
	err    error
	panic  any // what the read panicked with, if it did
	cancel context.CancelFunc

	// Guarded by Store.readsMu.
	waiters int // callers that have neither taken the result nor given up

	copying chan struct{} // closed when the last copy is taken (see take)
	copies  int           // copies being made, guarded by Store.readsMu
}

// resolve reads ref's payload for m's subject, joining a read of the
// same object, size and subject already in progress on this Store.
func (s *Store) resolve(ctx context.Context, m *nats.Msg, ref *refInfo) ([]byte, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	key := readKey{bucket: ref.bucket, domain: ref.domain, name: ref.name, subject: m.Subject, size: ref.size}
	s.readsMu.Lock()
	sr := s.reads[key]
	if sr == nil {
		sr = &sharedRead{done: make(chan struct{})}
		rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		sr.cancel = cancel
		if s.reads == nil {
			s.reads = make(map[readKey]*sharedRead)
		}
		s.reads[key] = sr
		go s.readShared(rctx, key, sr, m.Subject, ref)
	}
	sr.waiters++
	s.readsMu.Unlock()

	wctx := ctx
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, s.cfg.readTimeout)
		defer cancel()
	}
	select {
	case <-sr.done:
		return s.take(sr)
	case <-wctx.Done():
		s.leave(key, sr)
		return nil, waitError(wctx, ref, m.Subject)
	}
}

// readShared reads the object for the callers of sr, publishes the
// result and ends the read's context.
func (s *Store) readShared(ctx context.Context, key readKey, sr *sharedRead, subject string, ref *refInfo) {
	var data []byte
	var err error
	finished := false
	defer func() {
		p := recover()
		if p == nil && !finished {
			// runtime.Goexit (a WithSubjectMatch function's, or t.FailNow
			// in one): no result was set, and none may look like success.
			err = &ResolveError{Object: ref.name, Subject: subject, Err: errReadExited,
				Detail: "the read's goroutine exited before it finished (runtime.Goexit in a WithSubjectMatch function?)"}
		}
		sr.cancel()
		s.readsMu.Lock()
		if s.reads[key] == sr {
			delete(s.reads, key) // later callers read anew
		}
		sr.data, sr.err, sr.panic = data, err, p
		s.readsMu.Unlock()
		close(sr.done)
	}()
	r, err := s.openWithin(ctx, sr.cancel, subject, ref, resolveWindow, resolveWindowBytes)
	if err == nil {
		defer func() { _ = r.Close() }() // the read's own error is what matters
		data, err = r.readAll()
	}
	finished = true
}

// take returns sr's result to one of its callers: a copy, unless no other
// caller is left to take it, in which case the read's own buffer once
// every copy of it has been made.
func (s *Store) take(sr *sharedRead) ([]byte, error) {
	if sr.err != nil || sr.panic != nil {
		s.readsMu.Lock()
		sr.waiters--
		s.readsMu.Unlock()
		if sr.panic != nil {
			panic(sr.panic)
		}
		if re, ok := sr.err.(*ResolveError); ok {
			own := *re // a caller may change the error it is given
			return nil, &own
		}
		return nil, sr.err
	}
	s.readsMu.Lock()
	sr.waiters--
	if sr.waiters == 0 {
		wait := sr.copies > 0
		if wait && sr.copying == nil {
			sr.copying = make(chan struct{})
		}
		ch := sr.copying
		s.readsMu.Unlock()
		if wait {
			<-ch // no copy reads the buffer once it is handed out
		}
		return sr.data, nil
	}
	sr.copies++
	s.readsMu.Unlock()
	out := make([]byte, len(sr.data))
	copy(out, sr.data)
	s.readsMu.Lock()
	sr.copies--
	if sr.copies == 0 && sr.copying != nil {
		close(sr.copying)
	}
	s.readsMu.Unlock()
	return out, nil
}

// leave gives up one caller's wait; the last one to give up before the
// read ends cancels it.
func (s *Store) leave(key readKey, sr *sharedRead) {
	s.readsMu.Lock()
	defer s.readsMu.Unlock()
	sr.waiters--
	if sr.waiters > 0 {
		return
	}
	select {
	case <-sr.done:
		// Ended meanwhile: the copies in progress (if any) finish alone.
	default:
		if s.reads[key] == sr {
			delete(s.reads, key)
		}
		sr.cancel()
	}
}

// waitError is what a caller that gave up waiting returns when ctx, its
// wait's context, ended: the error a read of its own would have returned
// at that point, a permission violation that ended ctx included.
func waitError(ctx context.Context, ref *refInfo, subject string) error {
	return readError(ctx, ref, subject, ctx.Err())
}
