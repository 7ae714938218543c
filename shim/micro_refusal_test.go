package shim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestMicroPermanentRefusals: RespondMicro on a request without a reply
// subject and RespondMicroError with an empty code are INVALID_ARGUMENT
// refusals (nats.ErrMsgNoReply for the former), as Respond's and
// RespondError's are, so Retry does not repeat them.
func TestMicroPermanentRefusals(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	rnc := connect(t, s.URL())
	svc, err := micro.AddService(rnc, micro.Config{Name: "adv2", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	type res struct {
		runs int
		err  error
	}
	out := make(chan res, 2)
	if err := svc.AddEndpoint("e", micro.HandlerFunc(func(req micro.Request) {
		runs := 0
		var err error
		if string(req.Data()) == "noreply" {
			err = shim.Retry(context.Background(), func(context.Context) error { runs++; return shim.RespondMicro(req, []byte("x"), nil) },
				shim.Backoff(time.Millisecond, time.Millisecond))
		} else {
			err = shim.Retry(context.Background(), func(context.Context) error { runs++; return shim.RespondMicroError(req, "", "") },
				shim.Backoff(time.Millisecond, time.Millisecond))
		}
		out <- res{runs, err}
	}), micro.WithEndpointSubject("adv2")); err != nil {
		t.Fatal(err)
	}
	if err := rnc.Flush(); err != nil { // the endpoint's subscription is known to the server
		t.Fatal(err)
	}
	pnc := connect(t, s.URL())
	_ = pnc.Publish("adv2", []byte("noreply")) //natssend:reviewed a request without a reply subject, for the test
	r := <-out
	var se *shim.Error
	errors.As(r.err, &se)
	if r.runs != 1 || se == nil || se.Code != shim.CodeInvalidArgument || !errors.Is(r.err, nats.ErrMsgNoReply) {
		t.Errorf("RespondMicro without a reply subject: ran %d times, %v", r.runs, r.err)
	}
	// Respond's behaviour for comparison.
	nr := shim.Respond(&nats.Msg{Subject: "x", Sub: &nats.Subscription{}}, nil, nil)
	if !errors.Is(nr, nats.ErrMsgNoReply) || shim.Classify(nr) != shim.OutcomeNotRun {
		t.Fatalf("Respond baseline: %v", nr)
	}
	_, _ = shim.NewClient(pnc, shim.WithTimeout(300*time.Millisecond)).Request(context.Background(), "adv2", []byte("emptycode"))
	r = <-out
	se = nil
	errors.As(r.err, &se)
	if r.runs != 1 || se == nil || se.Code != shim.CodeInvalidArgument {
		t.Errorf("RespondMicroError with an empty code: ran %d times, %v", r.runs, r.err)
	}
}
