package claimcheck_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
)

// TestManyUploadsOnSlowLink: 48 uploads of 1 MiB at once on one Store
// whose stream acknowledges one 64 KiB chunk per 20 ms (about 16 s for
// all of them): every upload succeeds. The Store's uploads share a budget of
// bytes not yet acknowledged whose limit follows the rate the stream
// acknowledges at, so each chunk is acknowledged within seconds of being
// sent. Before, every upload had its whole window in flight at once and
// the last chunks' acknowledgements came after their 10 s timeout.
func TestManyUploadsOnSlowLink(t *testing.T) {
	t.Parallel()
	const uploads, size = 48, 1 << 20
	srv := startServer(t)
	st, p := proxied(t, srv)
	// The stream stores (acknowledges) one chunk per 20 ms, as a starved
	// server does: a proxy holds each acknowledgement that long.
	p.On(natstest.Rule{Dir: natstest.ToClient, Every: true, Action: natstest.Delay, Delay: 20 * time.Millisecond,
		Match: func(f natstest.Frame) bool { return bytes.HasPrefix(f.Data, []byte(`{"stream":`)) }})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for i := range uploads {
		wg.Go(func() {
			if _, err := st.Prepare(ctx, &nats.Msg{Subject: "up", Data: payload(size, uint64(i))}, 0); err != nil {
				t.Errorf("upload %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	t.Logf("%d uploads of %d bytes in %v", uploads, size, time.Since(start))
}
