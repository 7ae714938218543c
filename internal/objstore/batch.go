package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// Errors of a Batch.
var (
	// ErrGap: a reply of the batch was lost (the chain of sequences
	// broke); ask again from the first missing sequence.
	ErrGap = errors.New("objstore: a reply of the batch was lost")
	// ErrStalled: no reply came for the stall time; the request or its
	// replies may be lost (a reconnect), ask again.
	ErrStalled = errors.New("objstore: no reply to the batch request")
)

// Msg is a message read with a direct get.
type Msg struct {
	Subject string
	Seq     uint64 // its stream sequence
	Data    []byte

	// Batch replies only.
	Pending    uint64 // matching messages left after it (Nats-Num-Pending)
	LastSeq    uint64 // the sequence of the reply before it in the batch, 0 for the first
	HasPending bool   // the reply carried Nats-Num-Pending: the server batches

	Status int    // a status reply (404, 204 EOB, ...): no message
	Desc   string // the status's description
}

func (m *Msg) statusError() error {
	switch m.Status {
	case 404:
		return ErrNotFound
	case 503:
		return nats.ErrNoResponders
	}
	return fmt.Errorf("objstore: direct get answered %d %s", m.Status, m.Desc)
}

// Header names of direct get replies (server/stream.go).
const (
	hdrSubject    = "Nats-Subject"
	hdrSequence   = "Nats-Sequence"
	hdrNumPending = "Nats-Num-Pending"
	hdrLastSeq    = "Nats-Last-Sequence"
	hdrStatus     = "Status"
	hdrDesc       = "Description"
)

// parseReply reads a direct get reply. A message on another subject than
// want is an error.
func parseReply(msg *nats.Msg, want string) (*Msg, error) {
	m := &Msg{}
	if st := msg.Header.Get(hdrStatus); st != "" {
		n, err := strconv.Atoi(st)
		if err != nil {
			return nil, fmt.Errorf("objstore: direct get status %q", st)
		}
		m.Status, m.Desc = n, msg.Header.Get(hdrDesc)
		if n != 204 {
			return m, nil
		}
	} else {
		m.Subject, m.Data = msg.Header.Get(hdrSubject), msg.Data
		if m.Subject != want {
			return nil, fmt.Errorf("objstore: direct get returned subject %q, asked for %q", m.Subject, want)
		}
		seq, err := strconv.ParseUint(msg.Header.Get(hdrSequence), 10, 64)
		if err != nil || seq == 0 {
			return nil, fmt.Errorf("objstore: direct get reply without a sequence")
		}
		m.Seq = seq
	}
	// Batch replies and the EOB.
	if v, ok := msg.Header[hdrNumPending]; ok && len(v) > 0 {
		p, err := strconv.ParseUint(v[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("objstore: direct get %s %q", hdrNumPending, v[0])
		}
		m.Pending, m.HasPending = p, true
		if m.LastSeq, err = strconv.ParseUint(msg.Header.Get(hdrLastSeq), 10, 64); err != nil {
			return nil, fmt.Errorf("objstore: direct get %s %q", hdrLastSeq, msg.Header.Get(hdrLastSeq))
		}
	}
	return m, nil
}

// batchRequest is the direct get request of a batch
// (server/jetstream_api.go JSApiMsgGetRequest).
type batchRequest struct {
	Seq      uint64 `json:"seq,omitempty"`
	NextFor  string `json:"next_by_subj"`
	Batch    int    `json:"batch"`
	MaxBytes int    `json:"max_bytes,omitempty"`
}

// batchRequestJSON encodes a batch request. A subject of plain characters
// (the object store's are) is written directly, which a read does for
// every batch; anything else goes through encoding/json.
func batchRequestJSON(from uint64, subject string, n, maxBytes int) ([]byte, error) {
	for i := 0; i < len(subject); i++ {
		if c := subject[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return json.Marshal(batchRequest{Seq: from, NextFor: subject, Batch: n, MaxBytes: maxBytes})
		}
	}
	b := make([]byte, 0, 64+len(subject))
	if from != 0 {
		b = strconv.AppendUint(append(b, `{"seq":`...), from, 10)
		b = append(b, ',')
	} else {
		b = append(b, '{')
	}
	b = append(append(append(b, `"next_by_subj":"`...), subject...), `","batch":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	if maxBytes != 0 {
		b = strconv.AppendInt(append(b, `,"max_bytes":`...), int64(maxBytes), 10)
	}
	return append(b, '}'), nil
}

// Batch is one batch request's replies, read with Next.
type Batch struct {
	r       *Reader
	f       *flight
	subject string
	from    uint64 // the first sequence asked for
	n       int    // replies asked for
	got     int    // messages received
	prev    uint64 // the sequence of the last message received
	ended   bool
	final   bool // a status reply came: the server sends nothing more
	single  bool // the server answered with one message without batch headers
	// Pending is what the server reported left after the batch, set by
	// its EOB.
	Pending uint64
}

// Batch asks for up to n messages on subject (no wildcards) from stream
// sequence from on, at most about maxBytes bytes of them, and returns the
// batch to read them from. It waits for room in the Reader's budget
// first. Close the batch when done with it.
func (r *Reader) Batch(ctx context.Context, subject string, from uint64, n, maxBytes int) (*Batch, error) {
	n = max(n, 1)
	held, err := r.budget.Acquire(ctx, int64(maxBytes)+int64(n)*replyOverhead)
	if err != nil {
		return nil, err
	}
	// Room for every reply the request can have: n messages and the EOB.
	f, inbox, err := r.mux.open(n+1, r.budget, held)
	if err != nil {
		r.budget.Release(held)
		return nil, err
	}
	f.attempt = r.stalls.attempt(stallKey{subject, from})
	req, err := batchRequestJSON(from, subject, n, maxBytes)
	if err == nil {
		r.sent()
		err = r.nc.PublishRequest(r.direct, inbox, req) //natssend:reviewed a direct get request: a few hundred bytes, asked again when unanswered
	}
	if err != nil {
		f.close(true)
		return nil, err
	}
	return &Batch{r: r, f: f, subject: subject, from: from, n: n, prev: from - min(from, 1)}, nil
}

// Next returns the batch's next message. It returns io.EOF at the end of
// the batch (Pending then says how many messages the server still has
// after it), ErrNotFound when the stream has no message on the subject
// from the requested sequence on, ErrGap when a reply was lost,
// ErrStalled when the batch's replies count as lost (see the stall rule
// in stall.go: nothing came for stall, longer for a range that stalled
// before, and the connection did not go on receiving what was owed
// ahead of them), nats.ErrNoResponders when no replica serves direct
// gets, nats.ErrConnectionClosed when the connection was closed (seen
// within closedPoll), ctx's error when it ends.
func (b *Batch) Next(ctx context.Context, stall time.Duration) (*Msg, error) {
	if b.ended {
		return nil, io.EOF
	}
	var raw *nats.Msg
	select {
	case raw = <-b.f.ch:
		// Already there (a busy reader): no timer.
		return b.take(raw)
	default:
	}
	// One timer, woken every closedPoll while the wait lasts: a
	// connection closed meanwhile ends the wait then, and the stall rule
	// is checked then.
	since := time.Now()
	t := time.NewTimer(min(stall, closedPoll))
	defer t.Stop()
	for {
		select {
		case raw = <-b.f.ch:
			return b.take(raw)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		if b.r.nc.IsClosed() {
			return nil, nats.ErrConnectionClosed
		}
		if b.f.lost(since, stall) {
			b.r.gaveUp()
			b.r.stalls.stalled(stallKey{b.subject, b.prev + 1}, b.f.attempt)
			return nil, ErrStalled
		}
		t.Reset(min(stall, closedPoll))
	}
}

// closedPoll is how often a wait for a batch's reply looks whether the
// connection was closed.
const closedPoll = 250 * time.Millisecond

// Poll is Next without waiting: nil, nil when no reply is there yet.
func (b *Batch) Poll() (*Msg, error) {
	if b.ended {
		return nil, io.EOF
	}
	select {
	case raw := <-b.f.ch:
		return b.take(raw)
	default:
		return nil, nil
	}
}

// take checks the batch's next reply.
func (b *Batch) take(raw *nats.Msg) (*Msg, error) {
	m, err := parseReply(raw, b.subject)
	if err != nil {
		return nil, err
	}
	b.final = b.final || m.Status != 0
	switch {
	case m.Status == 204:
		if m.LastSeq != b.last() {
			b.r.gaveUp()
			return nil, ErrGap
		}
		b.ended, b.Pending = true, m.Pending
		return nil, io.EOF
	case m.Status != 0:
		return nil, m.statusError()
	case m.Seq <= b.prev:
		b.r.gaveUp()
		return nil, ErrGap
	case b.got == 0 && !m.HasPending:
		// A server without batched direct gets answers the first
		// message alone.
		b.single = true
	case !m.HasPending || m.LastSeq != b.last():
		b.r.gaveUp()
		return nil, ErrGap
	}
	if b.got == 0 && b.f.attempt > 0 {
		b.r.stalls.progressed(stallKey{b.subject, b.from})
	}
	b.got++
	b.prev = m.Seq
	if b.single {
		b.ended = true
	}
	return m, nil
}

// last is the Nats-Last-Sequence the next reply must carry: the
// sequence of the message before it in this batch, 0 before the first.
func (b *Batch) last() uint64 {
	if b.got == 0 {
		return 0
	}
	return b.prev
}

// Single reports whether the server answered without batch headers (a
// server older than nats-server 2.11): each request gives one message.
func (b *Batch) Single() bool { return b.single }

// Close ends the batch; replies still on their way are dropped, and the
// budget they hold is given back as they arrive (see flight.close).
func (b *Batch) Close() { b.f.close(b.ended || b.final || b.got >= b.n) }
