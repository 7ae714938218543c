package shim_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// BenchmarkFastPath compares every publish call and Client.Request with
// the raw nats.go call on the same connection, with the server (and the
// responder) in a child process so that only the client's cost is timed:
// 128 B and 16 KiB bodies, with and without headers, from 1 goroutine and
// from 8 goroutines on one connection. make bench-fast prints the ratios;
// rawMsgAgain, the raw call timed again after the others, shows how far
// two runs of the same call differ.
func BenchmarkFastPath(b *testing.B) {
	nc := connect(b, natstest.StartChild(b, "TestChildServer", nil, nil).URL)
	publishGroups(func(name string, par int, data []byte, h nats.Header) {
		msg := func() *nats.Msg { return &nats.Msg{Subject: "publish.bench", Data: data, Header: h} }
		ctx := context.Background()
		calls := []struct {
			name string
			fn   func() error
		}{
			{"raw", func() error { return nc.Publish("publish.bench", data) }}, //natssend:reviewed benchmark baseline
			{"rawMsg", func() error { return nc.PublishMsg(msg()) }},           //natssend:reviewed benchmark baseline
			{"Publish", func() error { return shim.Publish(nc, "publish.bench", data) }},
			{"PublishMsg", func() error { return shim.PublishMsg(nc, msg()) }},
			{"PublishContext", func() error { return shim.PublishContext(ctx, nc, "publish.bench", data) }},
			{"PublishMsgContext", func() error { return shim.PublishMsgContext(ctx, nc, msg()) }},
			// The raw call once more, last: its ratio to rawMsg is
			// the measurement's own spread (an A/A comparison).
			{"rawMsgAgain", func() error { return nc.PublishMsg(msg()) }}, //natssend:reviewed benchmark control
		}
		for _, call := range calls {
			if h != nil && (call.name == "raw" || call.name == "Publish" || call.name == "PublishContext") {
				continue // no header argument
			}
			b.Run("publish/"+name+"/"+call.name, func(b *testing.B) { runPar(b, par, len(data), call.fn) })
		}
	})
	c := shim.NewClient(nc)
	data := make([]byte, 128)
	for _, par := range []int{1, 8} {
		name := fmt.Sprintf("g%d/128B", par)
		b.Run("request/"+name+"/raw+header", func(b *testing.B) {
			runPar(b, par, 128, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), shim.DefaultTimeout)
				defer cancel()
				m := &nats.Msg{Subject: "svc", Data: data, Header: nats.Header{shim.HeaderTimeout: {"10000"}, shim.HeaderMaxPayload: {strconv.FormatInt(nc.MaxPayload(), 10)}}}
				_, err := nc.RequestMsgWithContext(ctx, m) //natssend:reviewed benchmark baseline
				return err
			})
		})
		b.Run("request/"+name+"/Client.Request", func(b *testing.B) {
			runPar(b, par, 128, func() error {
				_, err := c.Request(context.Background(), "svc", data)
				return err
			})
		})
	}
}

// BenchmarkFastPathRespond compares shim.Respond with (*nats.Msg).Respond
// on one received request, replied to b.N times (the reply subject has no
// subscriber: what is timed is the responder's own cost), server in a
// child process.
func BenchmarkFastPathRespond(b *testing.B) {
	nc := connect(b, natstest.StartChild(b, "TestChildServer", nil, nil).URL)
	sub, err := nc.SubscribeSync("respond.bench")
	if err != nil {
		b.Fatal(err)
	}
	if err := nc.PublishRequest("respond.bench", "respond.nobody", []byte("req")); err != nil { //natssend:reviewed benchmark set-up: one request to reply to
		b.Fatal(err)
	}
	req, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 128)
	b.Run("raw", func(b *testing.B) {
		runPar(b, 1, len(data), func() error { return req.Respond(data) }) //natssend:reviewed benchmark baseline
	})
	b.Run("Respond", func(b *testing.B) {
		runPar(b, 1, len(data), func() error { return shim.Respond(req, data, nil) })
	})
}

// publishGroups calls f for each group of publish rows, named
// g<goroutines>/<size>B/hdr=<bool>: from 1 and from 8 goroutines, with
// 128 B and 16 KiB bodies, without headers and with two (h nil or not).
func publishGroups(f func(name string, par int, data []byte, h nats.Header)) {
	hdr := nats.Header{"Authorization": {"Bearer 0123456789abcdef"}, "Trace": {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}
	for _, par := range []int{1, 8} {
		for _, size := range []int{128, 16 << 10} {
			data := make([]byte, size)
			for _, h := range []nats.Header{nil, hdr} {
				f(fmt.Sprintf("g%d/%dB/hdr=%v", par, size, h != nil), par, data, h)
			}
		}
	}
}

// runPar runs fn b.N times in all, from par goroutines.
func runPar(b *testing.B, par, size int, fn func() error) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	if par == 1 {
		for b.Loop() {
			if err := fn(); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.SetParallelism((par + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := fn(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
