package shim_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/shim"
	"github.com/natssend/natssend/telemetry"
)

// delayedCaller reads a 16 MiB stream from "rtt" as a hand-made caller
// declaring a 64 MiB window, acknowledging every frame at once (credit up
// to what it received plus the starting credit) but sending the start
// frame's acknowledgement after startDelay and every other one after
// ackDelay. It returns how many heartbeats flagged a stall.
func delayedCaller(t *testing.T, url string, startDelay, ackDelay time.Duration) int64 {
	t.Helper()
	nc := connect(t, url)
	defer nc.Close()
	inbox := nc.NewInbox()
	var stalls atomic.Int64
	done := make(chan struct{})
	var recv int64
	later := func(d time.Duration, subject string, body []byte) {
		time.AfterFunc(d, func() { _ = nc.Publish(subject, body) }) //natssend:reviewed test: a hand-made caller's control message
	}
	if _, err := nc.Subscribe(inbox, func(m *nats.Msg) {
		if len(m.Data) < shim.FramePrefix {
			return
		}
		p := m.Data[shim.FramePrefix:]
		switch m.Data[0] {
		case shim.FrameStart:
			later(startDelay, m.Reply, xfer.AckBody(0, xfer.InitialWindow, false))
		case shim.FrameData:
			recv += int64(len(p))
			later(ackDelay, m.Reply, xfer.AckBody(recv, recv+xfer.InitialWindow, false))
		case shim.FrameHeartbeat:
			if len(p) > 0 && p[0] == xfer.BeatStalled {
				stalls.Add(1)
			}
		case shim.FrameEnd:
			final := xfer.AckBody(recv, recv, true)
			time.AfterFunc(ackDelay, func() {
				_ = nc.Publish(m.Reply, final) //natssend:reviewed test: a hand-made caller's final ack
				_ = nc.Flush()
				close(done)
			})
		}
	}); err != nil {
		t.Fatal(err)
	}
	req := &nats.Msg{Subject: "rtt", Reply: inbox, Header: nats.Header{shim.HeaderStream: {"1 67108864 5000 0 hw256"}}}
	if err := nc.PublishMsg(req); err != nil { //natssend:reviewed test: a hand-made caller
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the stream did not end (%d bytes received)", recv)
	}
	return stalls.Load()
}

// A responder times the path by the caller's acknowledgement of its start
// frame (a small message), not only by its data frames' (which a busy
// server or reader delays with whatever is queued ahead): it reports
// waits for credit (so that the caller may widen its window) on a path
// whose round trip is long, and on a short path it measures the short
// round trip however late the acknowledgements of data come (its span's
// natssend.stream.round_trip).
func TestStreamResponderTimesThePathByItsStartFrame(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.MaxPayload(1<<20))
	k := newOtelKit(t)
	body := payload(16<<20, 3)
	if _, err := shim.Serve(connect(t, s.URL()), "rtt", shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		_, err := w.Write(body)
		return err
	}, shim.Telemetry(telemetry.WithTracerProvider(k.tp)))); err != nil {
		t.Fatal(err)
	}
	rtt := func(round int) float64 {
		spans := k.spans("process rtt")
		natstest.Eventually(t, 10*time.Second, func() bool { spans = k.spans("process rtt"); return len(spans) == round }, "the responder's span")
		return attr(spans[round-1], "natssend.stream.round_trip").AsFloat64()
	}
	const long = 3 * xfer.LongPath
	if n := delayedCaller(t, s.URL(), long, long); n == 0 {
		t.Errorf("a %v round trip: no stall reported", long)
	}
	if got := rtt(1); got < xfer.LongPath.Seconds() {
		t.Errorf("a %v round trip measured as %vs", long, got)
	}
	const late = 300 * time.Millisecond
	delayedCaller(t, s.URL(), 0, late)
	if got := rtt(2); got <= 0 || got >= late.Seconds() {
		t.Errorf("a short path whose data acknowledgements take %v: round trip measured as %vs", late, got)
	}
}
