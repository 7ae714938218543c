package shim_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestReplyDuringReconnect: a Handler given Conn waits
// (replyReconnectWait) for its connection to reconnect when a reply is
// ready while it is reconnecting. With ServeClaimChecks and a caller that
// accepts claim checks, a small reply that fits gets the same treatment.
func TestReplyDuringReconnect(t *testing.T) {
	t.Parallel()
	for _, withCC := range []bool{false, true} {
		name := "plain"
		if withCC {
			name = "ServeClaimChecks"
		}
		t.Run(name, func(t *testing.T) {
			s := natstest.Start(t, natstest.MaxPayload(overflowLimit), natstest.JetStream())
			p := s.Proxy(t)
			nc := connect(t, s.URL())
			rnc := connect(t, p.URL(), nats.MaxReconnects(-1))
			cst := newStore(t, nc)
			rst := newStore(t, rnc)
			started := make(chan struct{}, 1)
			gate := make(chan struct{})
			var mu sync.Mutex
			var reported []error
			opts := []shim.HandlerOption{shim.Conn(rnc), shim.OnError(func(_ *nats.Msg, err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() })}
			if withCC {
				opts = append(opts, shim.ServeClaimChecks(rst))
			}
			if _, err := rnc.Subscribe("svc", shim.Handler(func(context.Context, *nats.Msg) ([]byte, error) {
				started <- struct{}{}
				<-gate
				return []byte("small reply"), nil
			}, opts...)); err != nil {
				t.Fatal(err)
			}
			_ = rnc.Flush()
			c := shim.NewClient(nc, shim.WithClaimChecks(cst), shim.WithTimeout(10*time.Second))
			type res struct {
				m   *nats.Msg
				err error
			}
			out := make(chan res, 1)
			go func() { m, err := c.Request(context.Background(), "svc", []byte("q")); out <- res{m, err} }()
			<-started
			p.SetDown(true)
			p.Cut()
			for deadline := time.Now().Add(5 * time.Second); !rnc.IsReconnecting(); {
				if time.Now().After(deadline) {
					t.Fatal("responder did not start reconnecting")
				}
				time.Sleep(5 * time.Millisecond)
			}
			close(gate)
			time.Sleep(300 * time.Millisecond) // the link stays down while the reply is due
			p.SetDown(false)
			r := <-out
			mu.Lock()
			defer mu.Unlock()
			if r.err != nil {
				t.Errorf("caller got %v (responder OnError %v)", r.err, reported)
			} else if string(r.m.Data) != "small reply" {
				t.Errorf("reply %q", r.m.Data)
			}
		})
	}
}
