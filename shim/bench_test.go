package shim_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

var sink int

func BenchmarkMsgSize(b *testing.B) {
	for _, tc := range []struct {
		name string
		h    nats.Header
	}{
		{"headers=0", nil},
		{"headers=5", nats.Header{
			"Nats-Msg-Id": {"order-42"}, "Authorization": {"Bearer abcdefghijklmnop"},
			"Trace-Id": {"4bf92f3577b34da6a3ce929d0e0e4736"}, "Content-Type": {"application/json"},
			"X-Tenant": {"acme"},
		}},
	} {
		m := &nats.Msg{Subject: "s", Header: tc.h, Data: make([]byte, 128)}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink += shim.MsgSize(m)
			}
		})
	}
}

// benchServer starts a server with a responder that answers "ok" through
// nats.go directly, so both request paths see the same responder.
func benchServer(b *testing.B) (*natstest.Server, *nats.Conn) {
	s := natstest.Start(b, natstest.MaxPayload(1<<20))
	responder, err := nats.Connect(s.URL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(responder.Close)
	if _, err := responder.Subscribe("bench", func(m *nats.Msg) { _ = m.Respond([]byte("ok")) }); err != nil { //natssend:reviewed benchmark baseline: the raw path under comparison
		b.Fatal(err)
	}
	if err := responder.Flush(); err != nil {
		b.Fatal(err)
	}
	nc, err := shim.Connect(s.URL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	return s, nc
}

// BenchmarkRequest compares Client.Request with nc.RequestWithContext on
// the same connection and responder. Both give each call a 10 s deadline:
// the raw path through context.WithTimeout per call (what callers of
// RequestWithContext write), the client through its default timeout.
func BenchmarkRequest(b *testing.B) {
	_, nc := benchServer(b)
	c := shim.NewClient(nc)
	for _, size := range []int{128, 64 << 10} {
		data := make([]byte, size)
		name := "128B"
		if size > 128 {
			name = "64KiB"
		}
		b.Run("raw/"+name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := nc.RequestWithContext(ctx, "bench", data) //natssend:reviewed benchmark baseline
				cancel()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		// raw+header is the raw path carrying the same headers as the
		// client (the timeout and the connection's limit): what any header
		// costs in nats.go (serializing it, and parsing it in the
		// responder, which runs in this process too).
		b.Run("raw+header/"+name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			m := &nats.Msg{Subject: "bench", Data: data, Header: nats.Header{shim.HeaderTimeout: {"10000"}, shim.HeaderMaxPayload: {strconv.FormatInt(nc.MaxPayload(), 10)}}}
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := nc.RequestMsgWithContext(ctx, m) //natssend:reviewed benchmark baseline
				cancel()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("shim/"+name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			ctx := context.Background()
			for b.Loop() {
				if _, err := c.Request(ctx, "bench", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRespond compares Respond with msg.Respond: one reply publish on
// the same connection.
func BenchmarkRespond(b *testing.B) {
	_, nc := benchServer(b)
	sub, err := nc.SubscribeSync("respond.bench")
	if err != nil {
		b.Fatal(err)
	}
	if err := nc.PublishRequest("respond.bench", "nobody.listens", nil); err != nil { //natssend:reviewed benchmark setup
		b.Fatal(err)
	}
	req, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 128)
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := req.Respond(data); err != nil { //natssend:reviewed benchmark baseline
				b.Fatal(err)
			}
		}
	})
	b.Run("shim", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := shim.Respond(req, data, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPublish compares PublishContext with nc.Publish for a message
// that fits: the shim's input checks, its look-up of the connection's
// limit state and the fit decision, against the raw call on the same
// connection.
func BenchmarkPublish(b *testing.B) {
	_, nc := benchServer(b)
	data := make([]byte, 128)
	b.Run("raw/128B", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := nc.Publish("publish.bench", data); err != nil { //natssend:reviewed benchmark baseline
				b.Fatal(err)
			}
		}
	})
	b.Run("shim/128B", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		for b.Loop() {
			if err := shim.PublishContext(ctx, nc, "publish.bench", data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
