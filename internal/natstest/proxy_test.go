package natstest_test

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
)

// tricky is a payload that a line-by-line reader would take for protocol.
var tricky = []byte("head\r\nMSG fake 1 5\r\nINFO {}\r\nPONG\r\nHPUB x 3 4\r\n\r\ntail")

func proxied(t *testing.T, s *natstest.Server) (*natstest.Proxy, *nats.Conn) {
	t.Helper()
	p := s.Proxy(t)
	nc, err := nats.Connect(p.URL(), nats.ReconnectWait(20*time.Millisecond), nats.MaxReconnects(-1), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return p, nc
}

func direct(t *testing.T, s *natstest.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.URL(), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func subscribe(t *testing.T, nc *nats.Conn, subject string) chan *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 64)
	if _, err := nc.ChanSubscribe(subject, ch); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ch
}

func recvMsg(t *testing.T, ch chan *nats.Msg) *nats.Msg {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message")
		return nil
	}
}

func TestProxyParsesPayloadsBothWays(t *testing.T) {
	s := natstest.Start(t)
	p, nc := proxied(t, s)
	pubs := p.On(natstest.Rule{Dir: natstest.ToServer, Subject: "in.>", Every: true})
	msgs := p.On(natstest.Rule{Dir: natstest.ToClient, Subject: "out.*", Every: true})
	hdrs := p.On(natstest.Rule{Dir: natstest.ToServer, Op: "HPUB", Every: true,
		Match: func(f natstest.Frame) bool { return f.HasHeader("K") && bytes.Equal(f.Data, tricky) }})
	in := subscribe(t, direct(t, s), "in.>")
	out := subscribe(t, nc, "out.*")
	big := bytes.Repeat(tricky, 10000) // ~600 KiB, split over many reads
	for i := range 3 {
		if err := nc.Publish("in.a.b", big); err != nil { //natssend:reviewed the proxy under test sees raw protocol; sizes are known and below max_payload
			t.Fatal(err)
		}
		m := &nats.Msg{Subject: fmt.Sprintf("in.%d", i), Data: tricky, Header: nats.Header{"K": {"v\r\nPUB y 1"}}}
		if err := nc.PublishMsg(m); err != nil { //natssend:reviewed the proxy under test sees raw protocol; sizes are known and below max_payload
			t.Fatal(err)
		}
		if err := direct(t, s).Publish("out.x", tricky); err != nil { //natssend:reviewed the proxy under test sees raw protocol; sizes are known and below max_payload
			t.Fatal(err)
		}
	}
	for range 6 {
		m := recvMsg(t, in)
		if !bytes.Equal(m.Data, big) && !bytes.Equal(m.Data, tricky) {
			t.Fatalf("payload on %s changed: %d bytes", m.Subject, len(m.Data))
		}
	}
	for range 3 {
		if m := recvMsg(t, out); !bytes.Equal(m.Data, tricky) {
			t.Fatalf("delivered payload changed: %q", m.Data)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if pubs.Count() != 6 || msgs.Count() != 3 || hdrs.Count() != 3 {
		t.Fatalf("counted %d PUB/HPUB, %d MSG, %d HPUB with header; want 6, 3, 3", pubs.Count(), msgs.Count(), hdrs.Count())
	}
	if f := hdrs.Frame(); f.Subject != "in.0" || f.Op != "HPUB" || f.Link != 1 {
		t.Fatalf("first header frame = %+v", f)
	}
}

func TestProxyCutBeforeAndAfterPub(t *testing.T) {
	for _, when := range []natstest.Point{natstest.Before, natstest.After} {
		t.Run(fmt.Sprint(when), func(t *testing.T) {
			s := natstest.Start(t)
			p, nc := proxied(t, s)
			got := subscribe(t, direct(t, s), "x.*")
			trig := p.On(natstest.Rule{Dir: natstest.ToServer, Subject: "x.*", Nth: 2, When: when, Action: natstest.Cut})
			for i := range 2 {
				if err := nc.Publish(fmt.Sprintf("x.%d", i), []byte("m")); err != nil { //natssend:reviewed the proxy under test sees raw protocol; sizes are known and below max_payload
					t.Fatal(err)
				}
			}
			trig.Wait(t, 10*time.Second)
			if m := recvMsg(t, got); m.Subject != "x.0" {
				t.Fatalf("got %s first", m.Subject)
			}
			natstest.Eventually(t, 10*time.Second, func() bool { return nc.IsConnected() && p.Links() == 2 }, "a reconnect through the proxy")
			if err := nc.Publish("x.after", []byte("m")); err != nil { //natssend:reviewed the proxy under test sees raw protocol; sizes are known and below max_payload
				t.Fatal(err)
			}
			want := "x.after"
			if when == natstest.After {
				want = "x.1" // the server had it before the cut
			}
			if m := recvMsg(t, got); m.Subject != want {
				t.Fatalf("got %s, want %s", m.Subject, want)
			}
		})
	}
}

func TestProxyDropsOneDelivery(t *testing.T) {
	s := natstest.Start(t)
	p, nc := proxied(t, s)
	ch := subscribe(t, nc, "d")
	trig := p.On(natstest.Rule{Dir: natstest.ToClient, Subject: "d", Nth: 2, Action: natstest.Drop})
	pub := direct(t, s)
	for i := range 3 {
		if err := pub.Publish("d", []byte{byte('0' + i)}); err != nil { //natssend:reviewed the proxy under test sees raw protocol; sizes are known and below max_payload
			t.Fatal(err)
		}
	}
	if a, b := recvMsg(t, ch), recvMsg(t, ch); string(a.Data) != "0" || string(b.Data) != "2" {
		t.Fatalf("got %q, %q; want 0, 2", a.Data, b.Data)
	}
	if trig.Count() != 1 || p.Links() != 1 || !nc.IsConnected() {
		t.Fatalf("fired %d, links %d, connected %v", trig.Count(), p.Links(), nc.IsConnected())
	}
}

func TestProxyHookRestartsServerWhenReplyArrives(t *testing.T) {
	s := natstest.Start(t)
	p, nc := proxied(t, s)
	resp := direct(t, s)
	var served atomic.Int32
	if _, err := resp.Subscribe("svc", func(m *nats.Msg) { served.Add(1); _ = m.Respond([]byte("ok")) }); err != nil { //natssend:reviewed the proxy under test sees raw protocol; sizes are known and below max_payload
		t.Fatal(err)
	}
	if err := resp.Flush(); err != nil {
		t.Fatal(err)
	}
	trig := p.On(natstest.Rule{Dir: natstest.ToClient, Subject: "_INBOX.>", Action: natstest.Cut,
		Hook: func(natstest.Frame) { s.Restart() }})
	_, err := nc.Request("svc", nil, 2*time.Second) //natssend:reviewed the proxy under test sees raw protocol; sizes are known and below max_payload
	if err == nil {
		t.Fatal("the reply arrived although the link was cut before it")
	}
	trig.Wait(t, time.Second)
	if served.Load() != 1 {
		t.Fatalf("served %d", served.Load())
	}
	natstest.Eventually(t, 10*time.Second, func() bool { return nc.IsConnected() && p.Links() >= 2 }, "a reconnect through the proxy")
}

func TestProxyCutAfterBytesTearsAPublish(t *testing.T) {
	s := natstest.Start(t)
	p, nc := proxied(t, s)
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	got := subscribe(t, direct(t, s), "t")
	trig := p.CutAfterBytes(natstest.ToServer, int64(len("PUB t 10\r\n12345")), nil)
	if err := nc.Publish("t", []byte("1234567890")); err != nil { //natssend:reviewed the proxy under test sees raw protocol; sizes are known and below max_payload
		t.Fatal(err)
	}
	trig.Wait(t, 10*time.Second)
	natstest.Eventually(t, 10*time.Second, func() bool { return nc.IsConnected() && p.Links() == 2 }, "a reconnect")
	if err := nc.Publish("t", []byte("whole")); err != nil { //natssend:reviewed the proxy under test sees raw protocol; sizes are known and below max_payload
		t.Fatal(err)
	}
	if m := recvMsg(t, got); string(m.Data) != "whole" {
		t.Fatalf("the torn message was delivered: %q", m.Data)
	}
}

func TestProxyDelayAndDown(t *testing.T) {
	s := natstest.Start(t)
	p, nc := proxied(t, s)
	ch := subscribe(t, nc, "slow")
	p.On(natstest.Rule{Dir: natstest.ToClient, Subject: "slow", Action: natstest.Delay, Delay: 300 * time.Millisecond})
	start := time.Now()
	if err := direct(t, s).Publish("slow", nil); err != nil { //natssend:reviewed the proxy under test sees raw protocol; sizes are known and below max_payload
		t.Fatal(err)
	}
	recvMsg(t, ch)
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("delivered after %v, before the 300ms delay", d)
	}
	r0 := nc.Stats().Reconnects
	p.SetDown(true)
	p.Cut()
	natstest.Eventually(t, 5*time.Second, func() bool { return !nc.IsConnected() }, "the disconnect")
	// nats.go counts a reconnect once its TCP connection is up, before the
	// handshake the proxy (accepting, then resetting) makes fail.
	natstest.Eventually(t, 10*time.Second, func() bool { return nc.Stats().Reconnects >= r0+3 }, "several reconnect attempts, all refused")
	if nc.IsConnected() || p.Links() != 1 {
		t.Fatalf("reconnected through a proxy that is down (links %d)", p.Links())
	}
	p.SetDown(false)
	natstest.Eventually(t, 10*time.Second, nc.IsConnected, "the reconnect once up")
}
