package shim_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// BenchmarkFastPathPaired times each publish call against its raw nats.go
// counterpart interleaved in short phases on the same connection, server
// in a child process: raw, call, call, raw (ABBA), over and over, so that
// the machine's drift and whatever one phase leaves to the next (the
// server still draining the socket) fall on both sides alike. One
// benchmark iteration is one ABBA cycle.
//
// Reported: raw-ns/op and call-ns/op (over all phases), call/raw (their
// ratio) and cycle-median (the median over the cycles of the cycle's
// ratio). The "rawMsg-vs-rawMsg" rows pair the raw call with itself: how
// far the measurement strays from 1 with nothing to find.
func BenchmarkFastPathPaired(b *testing.B) {
	nc := connect(b, natstest.StartChild(b, "TestChildServer", nil, nil).URL)
	ctx := context.Background()
	publishGroups(func(group string, par int, data []byte, h nats.Header) {
		msg := func() *nats.Msg { return &nats.Msg{Subject: "publish.bench", Data: data, Header: h} }
		raw := func() error { return nc.Publish("publish.bench", data) } //natssend:reviewed benchmark baseline
		rawMsg := func() error { return nc.PublishMsg(msg()) }           //natssend:reviewed benchmark baseline
		pairs := []struct {
			name      string
			base, fn  func() error
			noHeaders bool // the call has no header argument
		}{
			{"Publish", raw, func() error { return shim.Publish(nc, "publish.bench", data) }, true},
			{"PublishMsg", rawMsg, func() error { return shim.PublishMsg(nc, msg()) }, false},
			{"PublishContext", raw, func() error { return shim.PublishContext(ctx, nc, "publish.bench", data) }, true},
			{"PublishMsgContext", rawMsg, func() error { return shim.PublishMsgContext(ctx, nc, msg()) }, false},
			{"rawMsg-vs-rawMsg", rawMsg, rawMsg, false},
		}
		for _, p := range pairs {
			if h != nil && p.noHeaders {
				continue
			}
			// About 2 MiB per phase: a few milliseconds.
			ops := max(2<<20/len(data), 64)
			b.Run("publish/"+group+"/"+p.name, func(b *testing.B) { runPaired(b, par, ops, p.base, p.fn) })
		}
	})
}

// runPaired runs ABBA cycles of base and fn, ops operations per phase
// from par goroutines, one cycle per benchmark iteration.
func runPaired(b *testing.B, par, ops int, base, fn func() error) {
	b.ReportAllocs()
	var tBase, tFn, cBase, cFn time.Duration
	var ratios []float64
	_, cpuOK := selfCPU()
	for b.Loop() {
		a1, ca1 := phase(b, par, ops, base)
		f1, cf1 := phase(b, par, ops, fn)
		f2, cf2 := phase(b, par, ops, fn)
		a2, ca2 := phase(b, par, ops, base)
		tBase += a1 + a2
		tFn += f1 + f2
		cBase += ca1 + ca2
		cFn += cf1 + cf2
		ratios = append(ratios, float64(f1+f2)/float64(a1+a2))
	}
	n := float64(2 * ops * len(ratios))
	b.ReportMetric(float64(tBase.Nanoseconds())/n, "raw-ns/op")
	b.ReportMetric(float64(tFn.Nanoseconds())/n, "call-ns/op")
	b.ReportMetric(float64(tFn)/float64(tBase), "call/raw")
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "cycle-median")
	if cpuOK && cBase > 0 {
		// The client's CPU (every thread: the flusher, the GC), the
		// server being another process.
		b.ReportMetric(float64(cFn)/float64(cBase), "cpu-call/raw")
	}
}

// phase runs fn ops times in all from par goroutines and returns how long
// that took and the CPU time the process used meanwhile.
func phase(b *testing.B, par, ops int, fn func() error) (wall, cpu time.Duration) {
	c0, _ := selfCPU()
	wall = phaseWall(b, par, ops, fn)
	c1, _ := selfCPU()
	return wall, c1 - c0
}

// phaseWall runs fn ops times in all from par goroutines and returns how
// long that took.
func phaseWall(b *testing.B, par, ops int, fn func() error) time.Duration {
	if par == 1 {
		t0 := time.Now()
		for range ops {
			if err := fn(); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(t0)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range par {
		n := ops / par
		if g < ops%par {
			n++
		}
		wg.Go(func() {
			<-start
			for range n {
				if err := fn(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	return time.Since(t0)
}
