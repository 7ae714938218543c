package shim_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestCallSetUpSameForEveryVerb: every verb refuses the same bad input
// the same way, before anything is sent (one call set-up): a nil context,
// an invalid subject, a header key nats.go cannot send, a context that
// already ended, an invalid option. Nothing reaches the subject.
func TestCallSetUpSameForEveryVerb(t *testing.T) {
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	seen := make(chan *nats.Msg, 64)
	if _, err := connect(t, s.URL()).ChanSubscribe(">", seen); err != nil {
		t.Fatal(err)
	}
	c := shim.NewClient(nc)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	verbs := map[string]func(ctx context.Context, m *nats.Msg, bad bool) error{
		"Request": func(ctx context.Context, m *nats.Msg, bad bool) error {
			var opts []shim.CallOption
			if bad {
				opts = append(opts, shim.Timeout(-1))
			}
			_, err := c.RequestMsg(ctx, m, opts...)
			return err
		},
		"Attempts": func(ctx context.Context, m *nats.Msg, bad bool) error {
			opts := []shim.CallOption{shim.Attempts(3)}
			if bad {
				opts = append(opts, shim.Timeout(-1))
			}
			_, err := c.RequestMsg(ctx, m, opts...)
			return err
		},
		"RequestMany": func(ctx context.Context, m *nats.Msg, bad bool) error {
			var opts []shim.ManyOption
			if bad {
				opts = append(opts, shim.Timeout(-1))
			}
			for _, err := range c.RequestMany(ctx, m.Subject, m.Data, opts...) {
				return err
			}
			return nil
		},
		"RequestStream": func(ctx context.Context, m *nats.Msg, bad bool) error {
			var opts []shim.StreamOption
			if bad {
				opts = append(opts, shim.Timeout(-1))
			}
			rs, err := c.RequestMsgStream(ctx, m, opts...)
			if rs != nil {
				_ = rs.Close()
			}
			return err
		},
		"PublishMsgContext": func(ctx context.Context, m *nats.Msg, bad bool) error {
			if bad {
				return shim.ErrInvalidOption // Publish takes no options
			}
			return shim.PublishMsgContext(ctx, nc, m)
		},
	}
	cases := []struct {
		name string
		ctx  context.Context
		m    *nats.Msg
		bad  bool
		code string
		is   error
	}{
		{"nil context", nil, &nats.Msg{Subject: "setup.ok"}, false, shim.CodeInvalidArgument, nats.ErrInvalidContext},
		{"invalid subject", context.Background(), &nats.Msg{Subject: "setup bad"}, false, shim.CodeInvalidArgument, nats.ErrBadSubject},
		{"invalid header key", context.Background(), &nats.Msg{Subject: "setup.ok", Header: nats.Header{"Bad Key": {"v"}}}, false, shim.CodeInvalidArgument, nats.ErrBadHeaderMsg},
		{"context already ended", done, &nats.Msg{Subject: "setup.ok"}, false, shim.CodeCanceled, context.Canceled},
		{"invalid option", context.Background(), &nats.Msg{Subject: "setup.ok"}, true, shim.CodeInvalidArgument, shim.ErrInvalidOption},
	}
	for name, verb := range verbs {
		for _, tc := range cases {
			if name == "RequestMany" && tc.m.Header != nil {
				continue // RequestMany takes a subject and data, no headers
			}
			err := verb(tc.ctx, tc.m, tc.bad)
			if name == "PublishMsgContext" && tc.bad {
				continue
			}
			d := shim.Describe(err)
			if err == nil || d.Code != tc.code || shim.Classify(err) != shim.OutcomeNotRun || !errors.Is(err, tc.is) {
				t.Errorf("%s, %s: %v; want %s, not run, matching %v", name, tc.name, err, tc.code, tc.is)
			}
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-seen:
		t.Fatalf("%q reached the server", m.Subject)
	default:
	}
}
