package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/internal/connlimit"
	"github.com/natssend/natssend/internal/wire"
)

// decide is the Store's use of connlimit.Decide, the one fit decision: m
// goes out with header block sent (m.Header plus what a JetStream publish
// adds) and reserve more header bytes, against limit (the connection's
// max_payload, or a stream's lower max_msg_size; connLimit is the
// connection's). The claim-check reference has the same headers plus
// HeaderRef and HeaderSize, and no body. For Refuse the error says why
// (ErrTooLarge).
func (s *Store) decide(m *nats.Msg, sent nats.Header, reserve, limit, connLimit int64) (connlimit.Verdict, error) {
	size := int64(wire.MsgSize(sent, len(m.Data))) + reserve
	refSize := int64(connlimit.NoClaimCheck)
	if int64(len(m.Data)) <= s.cfg.maxObject {
		refSize = int64(s.refHeaderSize(sent, len(m.Data))) + reserve
	}
	v := connlimit.Decide(size, limit, refSize)
	if v != connlimit.Refuse {
		return v, nil
	}
	if refSize == connlimit.NoClaimCheck {
		return v, fmt.Errorf("%w: the %d-byte body is above the store's maximum object size of %d bytes (MaxSize, or less with WithMaxObjectSize)",
			ErrTooLarge, len(m.Data), s.cfg.maxObject)
	}
	which := "the connection's max_payload"
	if limit < connLimit {
		which = "the stream's max_msg_size (or the caller's limit)"
	}
	return v, fmt.Errorf("%w: the headers are too large: the claim check's header block (%d bytes, plus %d reserved) would exceed %s of %d bytes even with an empty body (the body's size does not matter)",
		ErrTooLarge, refSize-reserve, reserve, which, limit)
}

// refHeaderSize is the header block of a claim check for a body of n
// bytes sent with header block sent: sent plus HeaderRef, HeaderSize,
// HeaderBucket and (with a domain) HeaderDomain. Object names have a
// fixed length (nameLen), so it is known before a name is drawn.
func (s *Store) refHeaderSize(sent nats.Header, n int) int {
	refHdr := wire.HeaderSize(sent)
	if refHdr == 0 {
		refHdr = wire.EmptyBlockSize
	}
	refHdr += wire.LineSize(HeaderRef, "") + nameLen + wire.LineSize(HeaderSize, strconv.Itoa(n)) + wire.LineSize(HeaderBucket, s.cfg.bucket)
	if s.domain != "" {
		refHdr += wire.LineSize(HeaderDomain, s.domain)
	}
	return refHdr
}

// refHeaders are the headers of a reference.
var refHeaders = [...]string{HeaderRef, HeaderSize, HeaderBucket, HeaderDomain}

// dropRefHeaders removes the reference headers from h, the headers of a
// resolved message.
func dropRefHeaders(h nats.Header) {
	for _, k := range refHeaders {
		delete(h, k)
	}
}

// setRef adds the reference headers for the object name of size bytes to
// h (refHeaderSize counts them).
func (s *Store) setRef(h nats.Header, name string, size int) {
	h.Set(HeaderRef, name)
	h.Set(HeaderSize, strconv.Itoa(size))
	h.Set(HeaderBucket, s.cfg.bucket)
	if s.domain != "" {
		h.Set(HeaderDomain, s.domain)
	}
}

// checkPublish refuses a publish on a nil Store (a New whose error was
// ignored), after Close, and invalid input.
func (s *Store) checkPublish(m *nats.Msg) error {
	if s == nil {
		return fmt.Errorf("%w: claimcheck: nil *Store (New failed?)", nats.ErrInvalidArg)
	}
	if s.isClosed() {
		return ErrClosed
	}
	return checkMsg(m)
}

// checkMsg is every input check of a publish, made before anything is
// stored or sent: natssend's one input check (wire.CheckMsg), and no
// header a claim check's reference would carry on a message with a body.
// A message that passes can be sent by nats.go, as it is or as a claim
// check.
func checkMsg(m *nats.Msg) error {
	if m == nil {
		return nats.ErrInvalidMsg
	}
	if err := wire.CheckMsg(m.Subject, m.Reply, m.Header); err != nil {
		return err
	}
	if len(m.Data) > 0 && m.Header != nil {
		for _, k := range refHeaders {
			if _, ok := m.Header[k]; ok {
				return ErrReservedHeader
			}
		}
	}
	return nil
}

// streamLimit is a cached stream max_msg_size for one subject.
type streamLimit struct {
	max     int64 // 0: no limit, or unknown
	expires time.Time
}

const (
	streamCacheTTL  = 30 * time.Second
	streamCacheSize = 4096
)

// streamMaxMsgSize returns the max_msg_size of the stream that stores
// subject, or 0 when there is none, no stream, or the lookup failed (for
// example for lack of permission on the JetStream API): the publish then
// relies on the server's ErrStreamMessageExceedsMaximum (see
// streamRefused). The lookup is a hint, so it never holds a publish up
// for long: its two requests together are bounded by streamLookupTimeout,
// and after one went unanswered (a denied request gets none, nor does one
// written just before the link broke) no lookup is made for
// streamCacheTTL.
func (s *Store) streamMaxMsgSize(ctx context.Context, subject string) int64 {
	now := time.Now()
	s.mu.Lock()
	e, ok := s.streams[subject]
	off := now.Before(s.lookupOff)
	s.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.max
	}
	if off {
		return 0
	}
	var limit int64
	lctx, cancel := context.WithTimeout(ctx, streamLookupTimeout)
	defer cancel()
	name, err := s.js.StreamNameBySubject(lctx, subject)
	if err == nil {
		var st jetstream.Stream
		if st, err = s.js.Stream(lctx, name); err == nil {
			if ms := st.CachedInfo().Config.MaxMsgSize; ms > 0 {
				limit = int64(ms)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		s.lookupOff = now.Add(streamCacheTTL) // unanswered: not for every publish
		return 0
	}
	if e, ok := s.streams[subject]; ok && now.Before(e.expires) && e.max > 0 && (limit == 0 || e.max < limit) {
		limit = e.max // a refusal meanwhile taught us less (streamRefused)
	}
	s.cacheStreamLocked(subject, limit, now)
	return limit
}

// cacheStreamLocked caches limit as the max_msg_size of subject's stream
// from now for streamCacheTTL (a full cache is cleared first). s.mu is
// held.
func (s *Store) cacheStreamLocked(subject string, limit int64, now time.Time) {
	if len(s.streams) >= streamCacheSize {
		clear(s.streams)
	}
	s.streams[subject] = streamLimit{max: limit, expires: now.Add(streamCacheTTL)}
}

// streamLookupTimeout bounds a stream lookup (both its requests).
const streamLookupTimeout = time.Second

// streamRefused records that the stream storing subject refused a message
// of size bytes as too large (jetstream.ErrStreamMessageExceedsMaximum):
// its max_msg_size is below size, whatever a lookup said or could not say,
// so the next decision makes a claim check of it.
func (s *Store) streamRefused(subject string, size int64) {
	if size <= 1 {
		return
	}
	bound := size - 1
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.streams[subject]; ok && e.max > 0 && e.max < bound {
		bound = e.max
	}
	s.cacheStreamLocked(subject, bound, time.Now())
}
