package shim_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// StallTimeout is measured from the previous reply's arrival: a reply that
// arrived after the gap ends the collection even when the loop body was
// busy meanwhile; one that arrived within it is yielded however long the
// body took.
func TestRequestManyStallFromArrival(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	resp := rawConn(t, s.URL())
	const stall = 250 * time.Millisecond
	took, sent := make(chan struct{}), make(chan struct{})
	if _, err := resp.Subscribe("late", func(m *nats.Msg) {
		_ = resp.Publish(m.Reply, []byte("1"))
		go func() {
			<-took                // the caller has reply 1
			time.Sleep(3 * stall) // the gap: longer than the stall
			_ = resp.Publish(m.Reply, []byte("2"))
			_ = resp.Flush()
			close(sent)
		}()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Subscribe("quick", func(m *nats.Msg) {
		_ = resp.Publish(m.Reply, []byte("1"))
		_ = resp.Publish(m.Reply, []byte("2"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := resp.Flush(); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, s.URL())
	c := shim.NewClient(nc)
	var got []string
	for m, err := range c.RequestMany(context.Background(), "late", nil, shim.StallTimeout(stall)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(m.Data))
		if len(got) == 1 {
			close(took)
			<-sent
			if err := nc.Flush(); err != nil { // reply 2 has reached the caller
				t.Fatal(err)
			}
		}
	}
	if len(got) != 1 {
		t.Errorf("got replies %q; want only the first: the second came %v after it, past the %v stall", got, 3*stall, stall)
	}
	got = nil
	for m, err := range c.RequestMany(context.Background(), "quick", nil, shim.StallTimeout(stall), shim.Timeout(5*time.Second)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(m.Data))
		if len(got) == 1 {
			time.Sleep(3 * stall) // a slow loop body: the next reply is already there
		}
	}
	if len(got) != 2 {
		t.Errorf("got replies %q; want both: the second arrived within the stall", got)
	}
}
