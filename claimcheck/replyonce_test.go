package claimcheck_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
)

// TestPrepareReplyStoresOnce: responders on several connections answer
// the same request (one reply subject) at once with oversized replies of
// different sizes, round after round. Exactly one reply is stored per
// subject; every other PrepareReply fails with ErrReplyStored (also
// ErrReservedHeader and ErrNotPublished) and leaves nothing stored; the
// stored reply resolves to its own responder's bytes.
func TestPrepareReplyStoresOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	const conns, perConn, rounds = 4, 2, 8
	stores := make([]*claimcheck.Store, conns)
	for i := range stores {
		_, js := connect(t, s.URL())
		stores[i] = newStore(t, js)
	}
	ctx := ctxT(t)
	for round := range rounds {
		subj := fmt.Sprintf("_INBOX.replyonce.%d", round)
		type result struct {
			ref  *nats.Msg
			body []byte
			err  error
		}
		results := make([]result, conns*perConn)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range results {
			body := payload((3+i)*limit, uint64(round*100+i))
			wg.Go(func() {
				<-start
				ref, err := stores[i%conns].PrepareReply(ctx, &nats.Msg{Subject: subj, Data: body}, 0, 0)
				results[i] = result{ref, body, err}
			})
		}
		close(start)
		wg.Wait()
		var won *result
		for i := range results {
			r := &results[i]
			switch {
			case r.err == nil && won == nil:
				won = r
			case r.err == nil:
				t.Fatalf("round %d: two replies stored for one reply subject", round)
			case !errors.Is(r.err, claimcheck.ErrReplyStored) || !errors.Is(r.err, claimcheck.ErrReservedHeader) || !errors.Is(r.err, claimcheck.ErrNotPublished):
				t.Fatalf("round %d: responder %d: %v, want ErrReplyStored", round, i, r.err)
			}
		}
		if won == nil {
			t.Fatalf("round %d: no reply stored", round)
		}
		info, err := stores[0].ObjectStore().GetInfo(ctx, claimcheck.ReplyObjectName(subj))
		if err != nil {
			t.Fatal(err)
		}
		if n := bucketMsgs(t, stores[0]); n != uint64(info.Chunks)+1 {
			t.Fatalf("round %d: %d messages stored, want the one reply's %d chunks and its meta message", round, n, info.Chunks)
		}
		got, err := stores[1].Resolve(ctx, won.ref)
		if err != nil {
			t.Fatalf("round %d: resolving the stored reply: %v", round, err)
		}
		if !bytes.Equal(got, won.body) {
			t.Fatalf("round %d: the reference resolves to %d bytes, not its responder's %d", round, len(got), len(won.body))
		}
		if err := stores[2].Discard(ctx, won.ref); err != nil {
			t.Fatal(err)
		}
		if n := bucketMsgs(t, stores[0]); n != 0 {
			t.Fatalf("round %d: %d messages left after the reply was discarded", round, n)
		}
	}
}
