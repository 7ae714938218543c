package shim_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// voters subscribes n responders (not a queue group) on subject; each
// answers with reply(i, req) after delay(i), or not at all when reply
// returns nil.
func voters(t *testing.T, url, subject string, n int, got *atomic.Int64, delay func(i int) time.Duration, reply func(i int, req *nats.Msg) *nats.Msg) {
	t.Helper()
	nc := connect(t, url)
	for i := range n {
		if _, err := nc.Subscribe(subject, func(req *nats.Msg) {
			got.Add(1)
			time.Sleep(delay(i)) // each voter answers after its own delay
			if r := reply(i, req); r != nil {
				_ = req.RespondMsg(r) //natssend:reviewed test responder
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

func collect(seq func(func(*nats.Msg, error) bool)) (replies []string, errs []error) {
	for m, err := range seq {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		replies = append(replies, string(m.Data))
	}
	sort.Strings(replies)
	return replies, errs
}

func TestRequestManyEnds(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.MaxPayload(4096))
	var got atomic.Int64
	noDelay := func(int) time.Duration { return 0 }
	answer := func(i int, req *nats.Msg) *nats.Msg { return &nats.Msg{Data: fmt.Appendf(nil, "n%d", i)} }
	voters(t, s.URL(), "vote", 5, &got, noDelay, answer)
	// Three fast voters, one slow.
	voters(t, s.URL(), "stall", 4, &got, func(i int) time.Duration {
		if i == 3 {
			return 5 * time.Second
		}
		return time.Duration(i) * 20 * time.Millisecond
	}, answer)
	// A stream of five replies then the empty sentinel, from one responder.
	nc := connect(t, s.URL())
	if _, err := nc.Subscribe("tail", func(req *nats.Msg) {
		for i := range 5 {
			_ = nc.Publish(req.Reply, fmt.Appendf(nil, "line%d", i)) //natssend:reviewed test responder
		}
		_ = nc.Publish(req.Reply, nil)                          //natssend:reviewed test responder
		_ = nc.Publish(req.Reply, []byte("after the sentinel")) //natssend:reviewed test responder
	}); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	c := shim.NewClient(connect(t, s.URL()), shim.WithHeader("Auth", "t"))
	ctx := context.Background()

	replies, errs := collect(c.RequestMany(ctx, "vote", []byte("q"), shim.MaxReplies(3)))
	if len(replies) != 3 || len(errs) != 0 {
		t.Errorf("MaxReplies(3): %v, %v", replies, errs)
	}
	start := time.Now()
	replies, errs = collect(c.RequestMany(ctx, "vote", []byte("q"), shim.Timeout(time.Second)))
	if strings.Join(replies, ",") != "n0,n1,n2,n3,n4" || len(errs) != 0 {
		t.Errorf("until the deadline: %v, %v", replies, errs)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("ended after %v, before the deadline", d)
	}
	start = time.Now()
	replies, errs = collect(c.RequestMany(ctx, "stall", []byte("q"), shim.StallTimeout(time.Second)))
	if strings.Join(replies, ",") != "n0,n1,n2" || len(errs) != 0 {
		t.Errorf("StallTimeout: %v, %v", replies, errs)
	}
	if d := time.Since(start); d > 4500*time.Millisecond {
		t.Errorf("StallTimeout ended after %v", d)
	}
	replies, errs = collect(c.RequestMany(ctx, "tail", nil, shim.Sentinel(shim.EmptyReply)))
	if strings.Join(replies, ",") != "line0,line1,line2,line3,line4" || len(errs) != 0 {
		t.Errorf("Sentinel: %v, %v", replies, errs)
	}
	// Breaking out stops the collection.
	for m, err := range c.RequestMany(ctx, "vote", nil) {
		if err != nil || len(m.Data) == 0 {
			t.Fatal(m, err)
		}
		break
	}
}

func TestRequestManyErrors(t *testing.T) {
	s := natstest.Start(t, natstest.MaxPayload(4096))
	var got atomic.Int64
	voters(t, s.URL(), "mixed", 3, &got, func(int) time.Duration { return 0 }, func(i int, req *nats.Msg) *nats.Msg {
		if i == 1 {
			return &nats.Msg{Header: nats.Header{shim.HeaderErrorCode: {"503"}, shim.HeaderError: {"draining"}}}
		}
		if req.Header.Get(shim.HeaderTimeout) == "" {
			return &nats.Msg{Data: []byte("no timeout header")}
		}
		return &nats.Msg{Data: []byte("ok")}
	})
	var silent atomic.Int64
	voters(t, s.URL(), "silent", 2, &silent, func(int) time.Duration { return 0 }, func(int, *nats.Msg) *nats.Msg { return nil })
	c := shim.NewClient(connect(t, s.URL()))
	ctx := context.Background()
	before := runtime.NumGoroutine()

	replies, errs := collect(c.RequestMany(ctx, "mixed", nil, shim.MaxReplies(3)))
	var e *shim.Error
	if strings.Join(replies, ",") != "ok,ok" || len(errs) != 1 || !errors.As(errs[0], &e) || !e.Remote || e.Code != "503" {
		t.Errorf("an error reply among others: %v, %v", replies, errs)
	}

	start := time.Now()
	_, errs = collect(c.RequestMany(ctx, "nobody", nil, shim.Timeout(5*time.Second)))
	if len(errs) != 1 || !errors.Is(errs[0], nats.ErrNoResponders) || shim.Classify(errs[0]) != shim.OutcomeNotRun || time.Since(start) > 2*time.Second {
		t.Errorf("no responders: %v after %v", errs, time.Since(start))
	}
	_, errs = collect(c.RequestMany(ctx, "silent", nil, shim.Timeout(200*time.Millisecond)))
	if len(errs) != 1 || !errors.Is(errs[0], context.DeadlineExceeded) || shim.Classify(errs[0]) != shim.OutcomeUnknown {
		t.Errorf("no reply: %v", errs)
	}
	if silent.Load() != 2 {
		t.Errorf("the silent responders got %d requests, want 2 (sent once)", silent.Load())
	}

	// Refusals before sending: nothing is sent.
	got.Store(0)
	for name, seq := range map[string]func(func(*nats.Msg, error) bool){
		"too large":   c.RequestMany(ctx, "mixed", make([]byte, 4096)),
		"bad subject": c.RequestMany(ctx, "a b", nil),
		"nil ctx":     c.RequestMany(nil, "mixed", nil), //nolint:staticcheck // on purpose
		"bad option":  c.RequestMany(ctx, "mixed", nil, shim.MaxReplies(0)),
	} {
		_, errs := collect(seq)
		if len(errs) != 1 || shim.Classify(errs[0]) != shim.OutcomeNotRun {
			t.Errorf("%s: %v", name, errs)
		}
	}
	_, errs = collect(c.RequestMany(ctx, "mixed", make([]byte, 4096)))
	if len(errs) != 1 || !errors.Is(errs[0], shim.ErrPayloadTooLarge) {
		t.Errorf("too large: %v", errs)
	}

	// The sequence sends once: a second range sends nothing.
	seq := c.RequestMany(ctx, "mixed", nil, shim.MaxReplies(3))
	collect(seq)
	_, errs = collect(seq)
	if len(errs) != 1 || !errors.Is(errs[0], shim.ErrSequenceReused) || shim.Classify(errs[0]) != shim.OutcomeNotRun {
		t.Errorf("second range: %v", errs)
	}
	natstest.Eventually(t, 5*time.Second, func() bool { return got.Load() == 3 }, "3 deliveries")
	stays(t, 100*time.Millisecond, func() bool { return got.Load() == 3 }, "3 deliveries (one send)")
	settle(t, before)
}
