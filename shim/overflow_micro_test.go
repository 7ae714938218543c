package shim_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

func TestOverflowMicro(t *testing.T) {
	t.Parallel()
	e := newOverflowEnv(t)
	var runs atomic.Int64
	var got atomic.Pointer[[]byte]
	svc, err := micro.AddService(e.rnc, micro.Config{Name: "overflow", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	if err := svc.AddEndpoint("q", micro.HandlerFunc(func(req micro.Request) {
		body, err := shim.ResolveMicro(context.Background(), e.rst, req)
		if err != nil {
			return
		}
		runs.Add(1)
		got.Store(&body)
		n, _ := strconv.Atoi(nats.Header(req.Headers()).Get("Want"))
		_ = shim.RespondMicroClaimCheck(context.Background(), e.rst, req, payload(n, 2), nil)
	}), micro.WithEndpointSubject("svc.micro")); err != nil {
		t.Fatal(err)
	}
	if err := e.rnc.Flush(); err != nil { // the endpoint's subscription is known to the server
		t.Fatal(err)
	}
	c := shim.NewClient(e.nc, shim.WithClaimChecks(e.cst), shim.WithTimeout(30*time.Second))
	body := payload(10*overflowLimit, 5)
	reply, err := c.RequestMsg(context.Background(), &nats.Msg{Subject: "svc.micro", Data: body, Header: nats.Header{"Want": {strconv.Itoa(10 * overflowLimit)}}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(*got.Load(), body) || !bytes.Equal(reply.Data, payload(10*overflowLimit, 2)) || claimcheck.IsClaimCheck(reply) {
		t.Fatal("micro round trip not byte-exact")
	}
	if runs.Load() != 1 {
		t.Fatalf("endpoint ran %d times", runs.Load())
	}
	if n := e.stored(t); n != 0 {
		t.Fatalf("%d messages left in the bucket", n)
	}
	// A caller that does not accept claim checks gets PAYLOAD_TOO_LARGE.
	_, err = shim.NewClient(e.nc).RequestMsg(context.Background(), &nats.Msg{Subject: "svc.micro", Header: nats.Header{"Want": {strconv.Itoa(2 * overflowLimit)}}})
	if !errors.Is(err, shim.ErrReplyTooLarge) {
		t.Fatalf("old client, large micro reply: got %v", err)
	}
	// A forged reference is refused before the endpoint runs.
	other, err := e.cst.Prepare(context.Background(), &nats.Msg{Subject: "other", Data: make([]byte, 1<<20)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	forged := &nats.Msg{Subject: "svc.micro", Header: nats.Header{
		claimcheck.HeaderRef:  other.Header[claimcheck.HeaderRef],
		claimcheck.HeaderSize: other.Header[claimcheck.HeaderSize],
	}}
	_, err = c.RequestMsg(context.Background(), forged)
	var se *shim.Error
	if !errors.As(err, &se) || se.Code != shim.CodeClaimCheckUnresolved || shim.Classify(err) != shim.OutcomeRejected {
		t.Fatalf("forged reference to a micro endpoint: got %v", err)
	}
	if runs.Load() != 2 {
		t.Fatalf("endpoint ran %d times, want 2", runs.Load())
	}
}
