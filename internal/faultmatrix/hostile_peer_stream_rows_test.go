package faultmatrix_test

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/shim"
)

// snooper: a peer with permissions p subscribes to every inbox of the
// account (as the documented callers may) and acts on the start frame of
// another caller's stream (its subject is the caller's inbox, its reply
// the responder's control inbox), before the responder writes data. The
// victim's read must never end in io.EOF with other bytes than the
// responder wrote; broken must be true when the peer's act can end the
// stream (a "can" of the threat model: the row then wants an error).
func snooper(p perms, broken bool, act func(peer *nats.Conn, frame *nats.Msg)) func(t *testing.T) {
	return func(t *testing.T) {
		e := newSecEnv(t, map[string]perms{peerUser: p})
		peer := e.rawAs(peerUser)
		var once sync.Once
		acted := make(chan struct{})
		if _, err := peer.Subscribe("_INBOX.>", func(m *nats.Msg) {
			if len(m.Data) > 0 && m.Data[0] == xfer.Start && m.Reply != "" {
				once.Do(func() { act(peer, m); _ = peer.Flush(); close(acted) })
			}
		}); err != nil {
			t.Fatal(err)
		}
		_ = peer.Flush()
		body := payload(streamBody, 3)
		rnc := e.as("")
		if _, err := shim.Serve(rnc, subject, shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
			if err := w.Flush(); err != nil { // the start frame
				return err
			}
			select { // the peer acts before the first data frame
			case <-acted:
			case <-time.After(settle):
			}
			for off := 0; off < len(body); off += piece {
				if _, err := w.Write(body[off : off+piece]); err != nil {
					return err
				}
			}
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		_ = rnc.Flush()
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		rs, err := shim.NewClient(e.as("")).RequestStream(ctx, subject, nil, shim.StreamWindow(smallWindow), shim.StreamIdle(streamIdle))
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		got, err := io.ReadAll(rs)
		t.Logf("read %d bytes: %v", len(got), err)
		switch {
		case err != nil && !broken:
			t.Errorf("the stream failed: %v; the server must have dropped the peer's act", err)
		case err == nil && !bytes.Equal(got, body):
			t.Errorf("io.EOF after %d bytes that are not the responder's", len(got))
		case err == nil && broken:
			t.Errorf("the whole body; the row wants the peer's act to end it (a documented can)")
		case err != nil && shim.Classify(err) != shim.OutcomeUnknown:
			t.Errorf("Classify = %v, want unknown", shim.Classify(err))
		}
	}
}

// forgeFrame publishes a data frame of garbage at offset 0 to frame's
// inbox, with the responder's control inbox as its reply: the caller takes
// it as the responder's first bytes.
func forgeFrame(peer *nats.Conn, frame *nats.Msg) {
	forged := xfer.Frame(xfer.Data, 0, bytes.Repeat([]byte{0xee}, piece))
	_ = peer.PublishMsg(&nats.Msg{Subject: frame.Subject, Reply: frame.Reply, Data: forged}) //natssend:reviewed a hostile peer's forged frame, small
}

// cancelStream publishes a cancel to the responder's control inbox (the
// reply subject of the frame the peer saw).
func cancelStream(peer *nats.Conn, frame *nats.Msg) {
	_ = peer.Publish(frame.Reply, []byte{xfer.Cancel}) //natssend:reviewed a hostile peer's control message, small
}

// tinyFrames: a raw caller declares a max-payload that leaves one payload
// byte per frame and a 256 KiB window it grants at once, and never
// acknowledges: the responder's heap must stay within the window plus
// hostileSlack (or it refuses the declared limit with INVALID_ARGUMENT).
func tinyFrames(t *testing.T) {
	const window = 256 << 10
	s := natstest.Start(t)
	resp := dial(t, s.URL())
	if _, err := shim.Serve(resp, subject, shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		buf := make([]byte, 4<<10)
		for range 4 * window / len(buf) {
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	_ = resp.Flush()
	raw := rawDial(t, s.URL())
	inbox := raw.NewInbox()
	var recv, frames atomic.Int64
	var refused atomic.Value
	var ctrl atomic.Value
	if _, err := raw.Subscribe(inbox, func(m *nats.Msg) {
		if code := m.Header.Get(shim.HeaderErrorCode); code != "" {
			refused.Store(code)
			return
		}
		if kind, _, p, ok := xfer.ParseFrame(m.Data); ok && kind == xfer.Data {
			ctrl.Store(m.Reply)
			recv.Add(int64(len(p)))
			frames.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	_ = raw.Flush()
	base := natstest.HeapAfterGC()
	h := nats.Header{natstest.StreamHeader: {natstest.StreamMarker(window, hostileIdle)}, shim.HeaderMaxPayload: {"10"}}
	if err := raw.PublishMsg(&nats.Msg{Subject: subject, Reply: inbox, Header: h}); err != nil { //natssend:reviewed a raw caller's stream request, small
		t.Fatal(err)
	}
	last, since := int64(-1), time.Now()
	natstest.Eventually(t, 60*time.Second, func() bool {
		if n := recv.Load(); n != last {
			last, since = n, time.Now()
		}
		return refused.Load() != nil || last >= window || time.Since(since) > time.Second
	}, "the window to fill (or the request to be refused)")
	grown := natstest.Growth(natstest.HeapAfterGC(), base)
	t.Logf("%d bytes in %d frames; refused %v; the heap grew by %d bytes", recv.Load(), frames.Load(), refused.Load(), grown)
	if c, _ := ctrl.Load().(string); c != "" {
		_ = raw.Publish(c, []byte{xfer.Cancel}) //natssend:reviewed a raw caller's cancel, small
	}
	if code, _ := refused.Load().(string); code != "" && code != shim.CodeInvalidArgument {
		t.Errorf("refused with %s; want INVALID_ARGUMENT", code)
	}
	if grown > window+hostileSlack {
		t.Errorf("the responder's heap grew by %d bytes holding a %d-byte window; the bound is the window + %d", grown, window, hostileSlack)
	}
}

func hostileStreamRows() []secRow {
	documented := perms{pubAllow: []string{subject, "_INBOX.>"}, subAllow: []string{"_INBOX.>"}}
	leastPriv := perms{pubAllow: []string{subject}, subAllow: []string{"_INBOX.>"}, responses: "{ max: -1, expires: \"1m\" }"}
	return []secRow{
		{path: pStreamCall, column: columnHostile, run: snooper(documented, true, forgeFrame),
			name: "(can) a peer with the documented stream caller's _INBOX.> publish forges a frame into another's stream: an error, never other bytes"},
		{path: pStreamCall, column: columnHostile, run: snooper(perms{pubAllow: []string{subject}, subAllow: []string{"_INBOX.>"}}, false, forgeFrame),
			name: "a peer with the documented caller's set (no _INBOX.> publish) cannot forge a frame into another's stream"},
		{path: pStreamResp, column: columnHostile, run: snooper(leastPriv, true, cancelStream),
			name: "(can) a peer with allow_responses that snoops _INBOX.> cancels another's stream at its responder: an error, never other bytes"},
		{path: pStreamResp, column: columnHostile, run: tinyFrames, heap: true,
			name: "a caller's forged max-payload (one byte per frame): the responder holds about its window"},
	}
}
