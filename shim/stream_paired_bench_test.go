package shim_test

import (
	"context"
	"errors"
	"flag"
	"io"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

var streamChildProf = flag.String("streambench.childprof", "",
	"BenchmarkStreamPaired: write the child process's CPU profile (server and the child's side of the stream) to this file")

var streamGatewayDelay = flag.Duration("streambench.delay", 10*time.Millisecond,
	"the one-way delay of the gateway link in BenchmarkStreamGateway (twice that a round trip)")

// pairedTransfer runs ABBA cycles, one per benchmark iteration: core,
// stream, stream, core, each moving size bytes, so that the machine's
// drift falls on both alike. It reports both throughputs over all phases,
// stream/core (their ratio) and cycle-median (the median over the cycles
// of the cycle's ratio). core returns the bytes that arrived (core NATS
// may drop some: counted in core-lost-MiB/op). With child > 0 (a process
// id) the CPU time of this process and the child's per MiB moved is
// reported for each (cpu-ms/MiB: both processes together).
func pairedTransfer(b *testing.B, size int64, child int, core func() int64, stream func()) {
	b.ReportAllocs()
	var tCore, tStream, cpuCore, cpuStream time.Duration
	var lost int64
	var ratios []float64
	cpu := func() time.Duration {
		self, _ := selfCPU()
		other, _ := procCPU(child)
		return self + other
	}
	timed := func(f func(), c *time.Duration) time.Duration {
		c0, t0 := cpu(), time.Now()
		f()
		d := time.Since(t0)
		*c += cpu() - c0
		return d
	}
	coreRun := func() { lost += size - core() }
	for b.Loop() {
		c1 := timed(coreRun, &cpuCore)
		s1 := timed(stream, &cpuStream)
		s2 := timed(stream, &cpuStream)
		c2 := timed(coreRun, &cpuCore)
		tCore += c1 + c2
		tStream += s1 + s2
		ratios = append(ratios, float64(c1+c2)/float64(s1+s2))
	}
	n := float64(2 * len(ratios))
	mbps := func(d time.Duration) float64 { return n * float64(size) / 1e6 / d.Seconds() }
	b.ReportMetric(mbps(tCore), "core-MB/s")
	b.ReportMetric(mbps(tStream), "stream-MB/s")
	b.ReportMetric(float64(tCore)/float64(tStream), "stream/core")
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "cycle-median")
	b.ReportMetric(float64(lost)/n/(1<<20), "core-lost-MiB/op")
	if _, ok := procCPU(child); ok && child > 0 {
		mib := n * float64(size) / (1 << 20)
		b.ReportMetric(float64(cpuCore.Milliseconds())/mib, "core-cpu-ms/MiB")
		b.ReportMetric(float64(cpuStream.Milliseconds())/mib, "stream-cpu-ms/MiB")
	}
}

// coreTransfer asks subject (a raw nats.go responder publishing the
// requested bytes in messages of a MiB or less to the reply subject, then
// an empty one) for size bytes and returns how many arrived.
func coreTransfer(b *testing.B, nc *nats.Conn, subject string, size int64) int64 {
	sub, err := nc.SubscribeSync(nc.NewInbox())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	_ = sub.SetPendingLimits(-1, -1)
	if err := nc.PublishRequest(subject, sub.Subject, []byte(strconv.FormatInt(size, 10))); err != nil { //natssend:reviewed benchmark baseline: the raw path under comparison
		b.Fatal(err)
	}
	n := int64(0)
	for {
		m, err := sub.NextMsg(10 * time.Second)
		if errors.Is(err, nats.ErrTimeout) {
			return n // the end marker was lost too
		}
		if err != nil {
			b.Fatal(err)
		}
		if len(m.Data) == 0 {
			return n
		}
		n += int64(len(m.Data))
	}
}

// streamTransfer reads a stream of size bytes from subject to its end and
// returns the window the caller had reached.
func streamTransfer(b *testing.B, c *shim.Client, subject string, size int64, opts ...shim.StreamOption) int64 {
	rs, err := c.RequestStream(context.Background(), subject, []byte(strconv.FormatInt(size, 10)), opts...)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, rs)
	_ = rs.Close()
	if err != nil || n != size {
		b.Fatal(n, err)
	}
	return shim.StreamWindowNow(rs)
}

// windowWatch keeps the widest window streams reached, for window-MiB.
type windowWatch struct{ widest int64 }

func (w *windowWatch) take(n int64) { w.widest = max(w.widest, n) }

func (w *windowWatch) report(b *testing.B) {
	b.ReportMetric(float64(w.widest)/(1<<20), "window-MiB")
}

// serveStreamUp serves "stream.up" on nc with a StreamHandler writing the
// requested number of bytes (what the child's "pull" reads) and returns
// the unsubscribe.
func serveStreamUp(b *testing.B, nc *nats.Conn) func() {
	sub, err := nc.Subscribe("stream.up", shim.StreamHandler(func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		n, _ := strconv.ParseInt(string(req.Data), 10, 64)
		return writeN(w, n)
	}, shim.Conn(nc)))
	if err != nil {
		b.Fatal(err)
	}
	_ = nc.Flush()
	return func() { _ = sub.Unsubscribe() }
}

// pullStream asks the child's "pull" to read a stream of size bytes from
// this process's "stream.up" and waits until it has.
func pullStream(b *testing.B, c *shim.Client, size int64) {
	req := []byte(strconv.FormatInt(size, 10))
	reply, err := c.Request(context.Background(), "pull", req, shim.Timeout(10*time.Minute))
	if err != nil || string(reply.Data) != string(req) {
		b.Fatal(err)
	}
}

// BenchmarkStreamPaired is BenchmarkStreamTransfer's stream against core
// NATS in ABBA cycles (pairedTransfer), -streambench.size bytes at a 1 MiB
// max_payload, the server in a child process (TestChildStreamServer):
//
//   - caller: this process reads a stream from the child's StreamHandler;
//   - responder: this process's StreamHandler writes a stream that a
//     ReplyStream in the child reads;
//
// and core: the child publishes the same bytes as raw messages that this
// process reads, as BenchmarkStreamTransfer/core does.
func BenchmarkStreamPaired(b *testing.B) {
	var args []string
	if *streamChildProf != "" {
		args = append(args, "-test.cpuprofile="+*streamChildProf)
	}
	child := natstest.StartChild(b, "TestChildStreamServer", args, nil)
	nc := connect(b, child.URL)
	size := *streamBenchSize
	c := shim.NewClient(nc, shim.WithTimeout(10*time.Minute))
	core := func() int64 { return coreTransfer(b, nc, "core", size) }
	var opts []shim.StreamOption
	if *streamBenchWindow > 0 {
		opts = append(opts, shim.StreamWindow(*streamBenchWindow))
	}
	b.Run("caller", func(b *testing.B) {
		var w windowWatch
		pairedTransfer(b, size, child.Pid, core, func() { w.take(streamTransfer(b, c, "push", size, opts...)) })
		w.report(b)
	})
	b.Run("responder", func(b *testing.B) {
		defer serveStreamUp(b, nc)() // -count runs this again
		pairedTransfer(b, size, child.Pid, core, func() { pullStream(b, c, size) })
	})
}

// BenchmarkStreamGateway moves -streambench.size bytes from a responder in
// the east cluster of a supercluster to a caller in the west, across a
// gateway whose link has -streambench.delay added each way (20 ms a round
// trip by default), at the default 1 MiB max_payload: a stream with the
// default window (stream) and with -streambench.window when set, against
// core NATS on the same path (a raw responder in the east publishing the
// bytes as 1 MiB messages to the caller's inbox) in ABBA cycles. The
// servers and the east side run in a child process
// (TestChildGatewayServers), so that this process times the caller alone;
// cpu-ms/MiB counts both processes.
func BenchmarkStreamGateway(b *testing.B) {
	child := natstest.StartChild(b, "TestChildGatewayServers", []string{"-streambench.delay=" + streamGatewayDelay.String()}, nil)
	wnc := connect(b, child.URL)
	c := shim.NewClient(wnc, shim.WithTimeout(time.Minute))
	natstest.Eventually(b, 30*time.Second, func() bool {
		rs, err := c.RequestStream(context.Background(), "gw.push", []byte("1"), shim.Timeout(2*time.Second))
		if err != nil {
			return false
		}
		_, err = io.Copy(io.Discard, rs)
		_ = rs.Close()
		return err == nil
	}, "a stream across the gateway")
	size := *streamBenchSize
	core := func() int64 { return coreTransfer(b, wnc, "gw.core", size) }
	b.Run("stream", func(b *testing.B) {
		var w windowWatch
		pairedTransfer(b, size, child.Pid, core, func() { w.take(streamTransfer(b, c, "gw.push", size)) })
		w.report(b)
	})
	if *streamBenchWindow > 0 {
		b.Run("window="+strconv.Itoa(*streamBenchWindow), func(b *testing.B) {
			var w windowWatch
			pairedTransfer(b, size, child.Pid, core, func() { w.take(streamTransfer(b, c, "gw.push", size, shim.StreamWindow(*streamBenchWindow))) })
			w.report(b)
		})
	}
}

// TestChildGatewayServers is BenchmarkStreamGateway's child process: a
// supercluster whose gateway links run through a delay line
// (-streambench.delay each way), with the stream responder and the core
// publisher on the east cluster; it announces the west cluster's URL, for
// the benchmark's caller.
func TestChildGatewayServers(t *testing.T) {
	natstest.ServeChild(t, func(t *testing.T) string {
		sc := natstest.StartSuperCluster(t, *streamGatewayDelay, 0)
		enc := connect(t, sc.East.URL())
		serveStreamOn(t, enc, "gw.push", func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
			n, _ := strconv.ParseInt(string(req.Data), 10, 64)
			return writeN(w, n)
		})
		if _, err := enc.Subscribe("gw.core", func(req *nats.Msg) {
			n, _ := strconv.ParseInt(string(req.Data), 10, 64)
			chunk := int64(enc.MaxPayload() - 64)
			for off := int64(0); off < n; off += chunk {
				_ = enc.Publish(req.Reply, benchBody[:min(chunk, n-off)]) //natssend:reviewed benchmark baseline: the raw path under comparison
			}
			_ = enc.Publish(req.Reply, nil) //natssend:reviewed benchmark baseline
		}); err != nil {
			t.Fatal(err)
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
		return sc.West.URL()
	})
}
