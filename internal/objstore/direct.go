package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Errors of a Reader.
var (
	// ErrNotFound: the stream holds no message for the request.
	ErrNotFound = errors.New("objstore: no such message")
	// ErrNoStream: the stream does not exist (the leader's answer).
	ErrNoStream = errors.New("objstore: stream not found")
)

// Reader reads one stream with direct gets (and purges subjects of it:
// Purge).
type Reader struct {
	*shared
	direct string // <prefix>DIRECT.GET.<stream>
	msgGet string // <prefix>STREAM.MSG.GET.<stream>
	info   string // <prefix>STREAM.INFO.<stream>
	purge  string // <prefix>STREAM.PURGE.<stream>

	memo   memo   // decoded meta data (Decoded)
	stalls stalls // ranges whose batches stalled (see the stall rule)

	requests atomic.Uint64 // requests sent
	lost     atomic.Uint64 // batches given up for lost replies (ErrGap, ErrStalled)
}

// budgetDelay is how much of the connection's receiving the reads may
// owe at once (see Budget.Adapt).
const budgetDelay = time.Second

// shared is what the Readers of one connection share: the reply inbox,
// the byte budget and the Readers of other streams (Sibling).
type shared struct {
	nc     *nats.Conn
	mux    *mux
	budget *Budget

	mu       sync.Mutex
	siblings map[string]*Reader // by API prefix and stream
}

// Stats are a Reader's counts since it was made.
type Stats struct {
	Requests uint64 // direct gets, leader gets and stream infos sent
	Lost     uint64 // batches whose replies were lost (a gap or a stall), asked for again: the re-asks
}

// Stats returns the Reader's counts.
func (r *Reader) Stats() Stats {
	return Stats{Requests: r.requests.Load(), Lost: r.lost.Load()}
}

// totals are the counts of every Reader of the process.
var totals struct{ requests, lost atomic.Uint64 }

// Totals returns the counts of every Reader of the process since it
// started: for tests whose Readers are out of reach (a Store's inside a
// shim Client), which take the difference over a run.
func Totals() Stats {
	return Stats{Requests: totals.requests.Load(), Lost: totals.lost.Load()}
}

// sent counts a request.
func (r *Reader) sent() {
	r.requests.Add(1)
	totals.requests.Add(1)
}

// gaveUp counts a batch given up for lost replies.
func (r *Reader) gaveUp() {
	r.lost.Add(1)
	totals.lost.Add(1)
}

// NewReader returns a Reader of stream through the JetStream API prefix
// (see APIPrefix) on nc. The bytes it (and its siblings) have asked for
// and not yet received stay within budget bytes, and within what the
// connection receives in budgetDelay (see Budget.Adapt).
func NewReader(nc *nats.Conn, apiPrefix, stream string, budget int64) *Reader {
	sh := &shared{nc: nc, mux: &mux{nc: nc, flights: make(map[string]*flight)}, budget: NewBudget(budget)}
	sh.budget.Adapt(budgetDelay)
	return sh.reader(apiPrefix, stream)
}

func (sh *shared) reader(apiPrefix, stream string) *Reader {
	return &Reader{shared: sh,
		direct: apiPrefix + "DIRECT.GET." + stream,
		msgGet: apiPrefix + "STREAM.MSG.GET." + stream,
		info:   apiPrefix + "STREAM.INFO." + stream,
		purge:  apiPrefix + "STREAM.PURGE." + stream,
	}
}

// Sibling returns the Reader of another stream, or of the same stream
// through another API prefix (another JetStream domain), on the same
// connection, sharing r's reply inbox and byte budget. It is made once
// per prefix and stream.
func (r *Reader) Sibling(apiPrefix, stream string) *Reader {
	key := apiPrefix + " " + stream
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.siblings == nil {
		r.siblings = make(map[string]*Reader)
	}
	sib := r.siblings[key]
	if sib == nil {
		sib = r.reader(apiPrefix, stream)
		r.siblings[key] = sib
	}
	return sib
}

// DropReplies makes the Reader lose every batch reply for which drop
// returns true, after it arrived, as a slow link or a reconnect loses
// them: for fault tests. nil turns it off.
func (r *Reader) DropReplies(drop func(*nats.Msg) bool) {
	if drop == nil {
		r.mux.drop.Store(nil)
		return
	}
	r.mux.drop.Store(&drop)
}

// Budget returns the Reader's byte budget.
func (r *Reader) Budget() *Budget { return r.budget }

// Last returns the last message on subject with a direct get, which any
// replica may answer: one request, one reply. It returns ErrNotFound when
// the answering replica holds none (a replica that lags may not hold it
// yet: LeaderLast is the stream leader's word), nats.ErrNoResponders when
// no replica serves direct gets.
func (r *Reader) Last(ctx context.Context, subject string) (*Msg, error) {
	r.sent()
	resp, err := r.nc.RequestWithContext(ctx, r.direct+"."+subject, nil) //natssend:reviewed a read: no effect to replay; a few bytes
	if err != nil {
		return nil, err
	}
	m, err := parseReply(resp, subject)
	if err != nil {
		return nil, err
	}
	if m.Status != 0 {
		return nil, m.statusError()
	}
	return m, nil
}

// msgGetResponse is the stream leader's answer to a message get
// (server/jetstream_api.go JSApiMsgGetResponse).
type msgGetResponse struct {
	Error   *jetstream.APIError `json:"error,omitempty"`
	Message *struct {
		Subject string `json:"subject"`
		Seq     uint64 `json:"seq"`
		Data    []byte `json:"data,omitempty"`
	} `json:"message,omitempty"`
}

// Server error codes (server/errors.json).
const (
	errCodeNoMessageFound = 10037
	errCodeStreamNotFound = 10059
)

// LeaderLast asks the stream's leader for the last message on subject
// (not a direct get): the authoritative answer when a replica said
// ErrNotFound. ErrNoStream when the stream does not exist.
func (r *Reader) LeaderLast(ctx context.Context, subject string) (*Msg, error) {
	req, err := json.Marshal(struct {
		LastFor string `json:"last_by_subj"`
	}{subject})
	if err != nil {
		return nil, err
	}
	r.sent()
	resp, err := r.nc.RequestWithContext(ctx, r.msgGet, req) //natssend:reviewed a read: no effect to replay; a few bytes
	if err != nil {
		return nil, err
	}
	var ans msgGetResponse
	if err := json.Unmarshal(resp.Data, &ans); err != nil {
		return nil, fmt.Errorf("objstore: malformed message get response: %w", err)
	}
	switch {
	case ans.Error != nil && ans.Error.ErrorCode == errCodeNoMessageFound:
		return nil, ErrNotFound
	case ans.Error != nil && ans.Error.ErrorCode == errCodeStreamNotFound:
		return nil, ErrNoStream
	case ans.Error != nil:
		return nil, ans.Error
	case ans.Message == nil || ans.Message.Subject != subject:
		return nil, errors.New("objstore: message get response without the message")
	}
	return &Msg{Subject: subject, Seq: ans.Message.Seq, Data: ans.Message.Data}, nil
}

// streamInfoResponse is the part of the stream leader's info a Reader
// reads (server/jetstream_api.go JSApiStreamInfoResponse).
type streamInfoResponse struct {
	Error  *jetstream.APIError `json:"error,omitempty"`
	Config struct {
		AllowDirect bool `json:"allow_direct"`
	} `json:"config"`
	State struct {
		Subjects map[string]uint64 `json:"subjects,omitempty"`
	} `json:"state"`
}

// AllowsDirect asks the stream's leader whether the stream serves direct
// gets (allow_direct), which every read of this package needs.
// ErrNoStream when the stream does not exist.
func (r *Reader) AllowsDirect(ctx context.Context) (bool, error) {
	ans, err := r.streamInfo(ctx, nil)
	if err != nil {
		return false, err
	}
	return ans.Config.AllowDirect, nil
}

// Stored asks the stream's leader how many messages it holds on subject
// (no wildcards). ErrNoStream when the stream does not exist.
func (r *Reader) Stored(ctx context.Context, subject string) (uint64, error) {
	req, err := json.Marshal(struct {
		Filter string `json:"subjects_filter"`
	}{subject})
	if err != nil {
		return 0, err
	}
	ans, err := r.streamInfo(ctx, req)
	if err != nil {
		return 0, err
	}
	return ans.State.Subjects[subject], nil
}

// streamInfo asks the stream's leader for its info (req: the request's
// body, nil for none). ErrNoStream when the stream does not exist.
func (r *Reader) streamInfo(ctx context.Context, req []byte) (*streamInfoResponse, error) {
	r.sent()
	resp, err := r.nc.RequestWithContext(ctx, r.info, req) //natssend:reviewed a read: no effect to replay; a few bytes
	if err != nil {
		return nil, err
	}
	ans := &streamInfoResponse{}
	if err := json.Unmarshal(resp.Data, ans); err != nil {
		return nil, fmt.Errorf("objstore: malformed stream info response: %w", err)
	}
	switch {
	case ans.Error != nil && ans.Error.ErrorCode == errCodeStreamNotFound:
		return nil, ErrNoStream
	case ans.Error != nil:
		return nil, ans.Error
	}
	return ans, nil
}
