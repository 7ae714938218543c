package claimcheck

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/telemetry"
)

// Batches: how many chunks one direct-get batch request asks for.
// Resolve holds the whole payload anyway and asks for resolveWindow
// chunks, or as many as make up resolveWindowBytes when chunks are small
// (129 of the 65024-byte chunks of a 64 KiB server), at most
// maxReadWindow; the next batch is asked for as soon as one has arrived.
// Open asks for half its window (WithOpenWindow) per batch, at least
// openWindow chunks, and keeps at most one batch read ahead of its
// caller.
const (
	openWindow         = 1
	resolveWindow      = 8
	resolveWindowBytes = 8 << 20
	maxReadWindow      = 256
)

// defaultChunkSize is the object store's chunk size when an object's
// meta data names none (jetstream/object.go).
const defaultChunkSize = 128 << 10

// readStallCheck is how long a read waits for the next reply of a batch
// before it asks again from the first missing chunk: a request or its
// replies can be lost to a reconnect, a restart or a slow link. A
// variable so that tests can shorten it.
var readStallCheck = 2 * time.Second

// IsClaimCheck reports whether m carries a claim-check header (it may
// still be malformed; Resolve says).
func IsClaimCheck(m *nats.Msg) bool {
	if m == nil || m.Header == nil {
		return false
	}
	_, ref := m.Header[HeaderRef]
	_, size := m.Header[HeaderSize]
	return ref || size
}

// Resolve returns m's payload: m.Data itself for a message that is not a
// claim check, otherwise the stored payload, read within ctx's deadline
// (WithReadTimeout's bound, DefaultReadTimeout unless set, when ctx has
// none) into a buffer of exactly the declared size. The payload is
// verified against the declared size and the stored digest (the
// HighwayHash-256 the Store records in the object's metadata, or the
// object store's SHA-256 for an object without it), and,
// unless WithSubjectBinding(false), the object must have been stored for
// m's subject (or one WithSubjectMatch accepts).
//
// Concurrent Resolves of the same claim check on the same Store share
// one read (see the package doc); each caller gets a buffer of its own
// and returns within its own deadline.
//
// On error the data is nil. Errors are *ResolveError wrapping ErrMissing
// (the object expired, was deleted or never existed), ErrCorrupt
// (malformed headers, size or digest mismatch), ErrSubjectMismatch
// (stored for another subject; also matches ErrCorrupt), ErrTooLarge
// (declared size above the Store's maximum, or chunks larger than this
// connection can receive: see the package doc), nats.ErrInvalidMsg (a nil
// message) or the transport error that interrupted the read.
//
// m.Subject must be the subject the sender published on for the binding
// to hold. That is what a Core NATS subscriber and a JetStream consumer
// see, unless something on the way rewrote it: an account subject mapping
// or import, a stream's SubjectTransform (the stream stores, and its
// consumers see, the transformed subject), a source or mirror with subject
// transforms, or a republish. Behind such a rewrite use
// WithSubjectBinding(false) or WithSubjectMatch.
func (s *Store) Resolve(ctx context.Context, m *nats.Msg) ([]byte, error) {
	ref, err := s.parse(m)
	if err != nil {
		return nil, err
	}
	if ref == nil {
		return m.Data, nil
	}
	ctx, op := s.startChild(ctx, telemetry.OperationResolve, m.Subject, 0)
	data, err := s.resolve(ctx, m, ref)
	endResolve(ctx, &op, len(data), err)
	return data, err
}

// Open is the streaming form of Resolve: the payload is read in batches
// of chunks as the returned reader is read, holding at most the Store's
// open window (WithOpenWindow, DefaultOpenWindow) or two chunks,
// whichever is more, in memory: the next batch is asked for once the
// caller has read what exceeds half the window. For a message that is
// not a claim check the reader reads m.Data. The last Read before io.EOF
// fails with ErrCorrupt when the digest does not match, so the data is
// trustworthy only once io.EOF is seen. The deadline (ctx's, or the read
// timeout) covers the whole read. Close ends the read (nothing is held
// on the server) and must be called.
func (s *Store) Open(ctx context.Context, m *nats.Msg) (io.ReadCloser, error) {
	ref, err := s.parse(m)
	if err != nil {
		return nil, err
	}
	if ref == nil {
		return io.NopCloser(bytes.NewReader(m.Data)), nil
	}
	r, err := s.open(ctx, m.Subject, ref, openWindow, s.cfg.openWindow/2)
	if err != nil {
		return nil, err
	}
	return r, nil
}

type refInfo struct {
	name   string
	size   int64
	bucket string // the bucket the reference names, or the Store's
	domain string // the JetStream domain it names when not the Store's own, else ""
}

// parse validates m's claim-check headers. It returns nil, nil for a
// message that is not a claim check, and a *ResolveError wrapping
// nats.ErrInvalidMsg for a nil message.
func (s *Store) parse(m *nats.Msg) (*refInfo, error) {
	if m == nil {
		return nil, &ResolveError{Err: nats.ErrInvalidMsg, Detail: "nil message"}
	}
	return s.parseParts(m.Subject, m.Header, len(m.Data))
}

func (s *Store) parseParts(subject string, h nats.Header, bodyLen int) (*refInfo, error) {
	refVals, hasRef := h[HeaderRef]
	sizeVals, hasSize := h[HeaderSize]
	if !hasRef && !hasSize {
		return nil, nil
	}
	bad := func(format string, args ...any) error {
		return &ResolveError{Subject: subject, Err: ErrCorrupt, Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case !hasRef:
		return nil, bad("%s header without %s header", HeaderSize, HeaderRef)
	case !hasSize:
		return nil, bad("%s header without %s header", HeaderRef, HeaderSize)
	case len(refVals) != 1:
		return nil, bad("%d %s headers, want 1", len(refVals), HeaderRef)
	case len(sizeVals) != 1:
		return nil, bad("%d %s headers, want 1", len(sizeVals), HeaderSize)
	case !validName(refVals[0]):
		return nil, bad("%s header %q is not an object name this package writes", HeaderRef, refVals[0])
	}
	name := refVals[0]
	size, ok := parseSize(sizeVals[0])
	if !ok {
		return nil, &ResolveError{Object: name, Subject: subject, Err: ErrCorrupt,
			Detail: fmt.Sprintf("%s header %q is not a decimal byte count", HeaderSize, sizeVals[0])}
	}
	if bodyLen != 0 {
		return nil, &ResolveError{Object: name, Subject: subject, Err: ErrCorrupt,
			Detail: fmt.Sprintf("claim check with a %d-byte body", bodyLen)}
	}
	if size > s.cfg.maxObject {
		return nil, &ResolveError{Object: name, Subject: subject, Err: ErrTooLarge,
			Detail: fmt.Sprintf("declared size %d is above this store's maximum %d", size, s.cfg.maxObject)}
	}
	bucket, domain, err := s.location(subject, name, h)
	if err != nil {
		return nil, err
	}
	return &refInfo{name: name, size: size, bucket: bucket, domain: domain}, nil
}

// parseSize accepts 1 to 10 decimal digits without sign or leading zero.
func parseSize(v string) (int64, bool) {
	if len(v) == 0 || len(v) > 10 || (len(v) > 1 && v[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}
