// Package interop_test runs the nats.js peer (peer.mjs, written from
// docs/protocol.md alone) against natssend's Go side: claim checks both
// ways, every RPC outcome, claim-checked requests and replies, and
// transfer streams. make interop runs it (NATSSEND_INTEROP=1) after
// npm ci; go test ./... skips it.
package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// limit is the test server's max_payload: the 64 KiB, at which
// nats.js writes chunks of 65,536 bytes.
const limit = 64 << 10

// requireInterop skips unless make interop asked for the run, and fails
// when the peer's packages are not installed.
func requireInterop(t *testing.T) {
	t.Helper()
	if os.Getenv("NATSSEND_INTEROP") == "" {
		t.Skip("nats.js interop: run make interop (NATSSEND_INTEROP=1, after npm ci in interop/)")
	}
	if _, err := os.Stat("node_modules/@nats-io/transport-node"); err != nil {
		t.Fatalf("nats.js packages not installed: run npm ci in interop/ (%v)", err)
	}
}

// server starts a 64 KiB JetStream server and connects to it.
func server(t *testing.T) (*natstest.Server, *nats.Conn, jetstream.JetStream) {
	t.Helper()
	s := natstest.Start(t, natstest.MaxPayload(limit), natstest.JetStream())
	nc, err := shim.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return s, nc, js
}

// store makes a Store on js.
func store(t *testing.T, js jetstream.JetStream, opts ...claimcheck.Option) *claimcheck.Store {
	t.Helper()
	st, err := claimcheck.New(ctxT(t, time.Minute), js, append([]claimcheck.Option{claimcheck.WithStorage(jetstream.MemoryStorage)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// peer is a running peer.mjs scenario.
type peer struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr bytes.Buffer
	ready  chan struct{}
	result chan string
	exited chan error
}

// runPeer starts peer.mjs scenario against url with env (KEY=value) and
// waits until it is ready.
func runPeer(t *testing.T, scenario, url string, env ...string) *peer {
	t.Helper()
	p := &peer{t: t, ready: make(chan struct{}), result: make(chan string, 1), exited: make(chan error, 1)}
	p.cmd = exec.Command("node", "peer.mjs", scenario)
	p.cmd.Env = append(os.Environ(), append([]string{"NATS_URL=" + url}, env...)...)
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("node: %v", err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "READY":
				close(p.ready)
			case strings.HasPrefix(line, "RESULT "):
				p.result <- strings.TrimPrefix(line, "RESULT ")
			default:
				t.Logf("peer: %s", line)
			}
		}
		p.exited <- p.cmd.Wait()
	}()
	select {
	case <-p.ready:
	case err := <-p.exited:
		t.Fatalf("peer %s exited before it was ready: %v\n%s", scenario, err, p.stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("peer %s not ready after 60s\n%s", scenario, p.stderr.String())
	}
	return p
}

// wait waits for the peer to exit and decodes its result into v.
func (p *peer) wait(v any) {
	p.t.Helper()
	select {
	case err := <-p.exited:
		if err != nil {
			p.t.Fatalf("peer failed: %v\n%s", err, p.stderr.String())
		}
	case <-time.After(5 * time.Minute):
		p.t.Fatalf("peer did not end\n%s", p.stderr.String())
	}
	select {
	case r := <-p.result:
		if v != nil {
			if err := json.Unmarshal([]byte(r), v); err != nil {
				p.t.Fatalf("peer result %q: %v", r, err)
			}
		}
	default:
		p.t.Fatalf("peer printed no result\n%s", p.stderr.String())
	}
}

// pattern is peer.mjs's test body: byte i is (i*7 + i>>13 + seed) mod 251.
func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte((i*7 + i>>13 + seed) % 251)
	}
	return b
}

// jsOf returns a JetStream context of nc.
func jsOf(t *testing.T, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
