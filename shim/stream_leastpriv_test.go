package shim_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/shim"
)

// TestStreamUnderResponsePermissionsOnly: a stream of about 3 s between
// a caller that may publish only to the service's subjects and a
// responder that may publish nothing of its own, both with allow_responses
// (no count limit; an expiry, counted from the first message of a reply
// subject, longer than the stream): the caller's control messages go only
// to the reply subject of the frames it received. Neither needs publish on
// _INBOX.>, which would let it write into every inbox of the account.
func TestStreamUnderResponsePermissionsOnly(t *testing.T) {
	const responses = `{ max: -1, expires: "1m" }`
	s := natstest.Start(t,
		natstest.WithUser(natstest.User{Name: "caller", Password: "p", Publish: []string{"lp.>"}, Subscribe: []string{"_INBOX.>"}, Responses: responses}),
		natstest.WithUser(natstest.User{Name: "responder", Password: "p", Publish: []string{"lp.none"}, Subscribe: []string{"lp.>", "_INBOX.>"}, Responses: responses}))
	body := payload(3<<20, 41)
	rnc := connect(t, s.UserURL("responder"))
	serveStreamOn(t, rnc, "lp.stream", func(ctx context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		const piece = 128 << 10
		for off := 0; off < len(body); off += piece {
			if _, err := w.Write(body[off:min(off+piece, len(body))]); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
			time.Sleep(120 * time.Millisecond) // 24 pieces: about 3 s
		}
		return nil
	})
	c := shim.NewClient(connect(t, s.UserURL("caller")))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rs, err := c.RequestStream(ctx, "lp.stream", nil, shim.StreamIdle(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	got, err := io.ReadAll(rs)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d of %d bytes: %v", len(got), len(body), err)
	}
}

// TestStreamResponderLearnsWhyItEnded: a cancel that says the stream
// broke ends the handler's context with ErrStreamProtocol; a plain cancel
// with ErrStreamCanceled.
func TestStreamResponderLearnsWhyItEnded(t *testing.T) {
	s := natstest.Start(t)
	causes := make(chan error, 2)
	serveStream(t, s.URL(), "why", func(ctx context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		if err := w.Flush(); err != nil { // the start frame
			return err
		}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil
	})
	raw := rawConn(t, s.URL())
	for _, tc := range []struct {
		broken bool
		want   error
	}{{true, shim.ErrStreamProtocol}, {false, shim.ErrStreamCanceled}} {
		inbox := raw.NewInbox()
		sub, err := raw.SubscribeSync(inbox)
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.PublishMsg(&nats.Msg{Subject: "why", Reply: inbox, Header: nats.Header{natstest.StreamHeader: {natstest.StreamMarker(1<<20, 10*time.Second)}}}); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil || len(m.Data) == 0 || m.Data[0] != xfer.Start {
			t.Fatalf("no start frame: %v", err)
		}
		if err := raw.Publish(m.Reply, xfer.CancelBody(tc.broken)); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-causes:
			if !errors.Is(got, tc.want) {
				t.Errorf("cancel (broken %v): the handler's context ended with %v, want %v", tc.broken, got, tc.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("cancel (broken %v): the handler's context did not end", tc.broken)
		}
		_ = sub.Unsubscribe()
	}
}

// TestStreamSurvivesOtherDenials: a caller allowed _INBOX.> except one
// subtree has a subscription of its own refused there, and a publish of
// its own dropped, while a stream runs: neither is the stream's (its inbox
// and the responder's control inbox were allowed), so the stream reads to
// its end. Before, any refusal under the inbox prefix ended it.
func TestStreamSurvivesOtherDenials(t *testing.T) {
	s := natstest.Start(t, natstest.WithUserConfig("narrow", "p", `{ user: "narrow", password: "p", permissions: {
		publish: { allow: ["od.>"] }
		subscribe: { allow: ["_INBOX.>"], deny: ["_INBOX.private.>"] }
		allow_responses: { max: -1, expires: "1m" }
	} }`))
	body := payload(2<<20, 43)
	release := make(chan struct{})
	serveStream(t, s.URL(), "od.stream", func(ctx context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		if _, err := w.Write(body[:1<<20]); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		_, err := w.Write(body[1<<20:])
		return err
	})
	nc := connect(t, s.UserURL("narrow"))
	c := shim.NewClient(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rs, err := c.RequestStream(ctx, "od.stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	got := make([]byte, 1<<20)
	if _, err := io.ReadFull(rs, got); err != nil {
		t.Fatal(err)
	}
	// Denials of other subjects on the same connection.
	if _, err := nc.Subscribe("_INBOX.private.mine", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("elsewhere.x", nil); err != nil { //natssend:reviewed a publish the server drops, on purpose
		t.Fatal(err)
	}
	natstest.Eventually(t, 10*time.Second, func() bool { return nc.LastError() != nil }, "the server's permission errors")
	close(release)
	rest, err := io.ReadAll(rs)
	if err != nil || !bytes.Equal(append(got, rest...), body) {
		t.Fatalf("after another subscription's refusal: read %d more bytes: %v", len(rest), err)
	}
}
