package shim_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/minio/highwayhash"
	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/xfer"
	"github.com/natssend/natssend/shim"
)

// digestResponder answers stream requests on subject as a responder that
// names digest in its start frame (none: an older responder, SHA-256)
// and ends with sum of claimed.
func digestResponder(t *testing.T, url, subject string, digest []byte, body, claimed []byte) {
	t.Helper()
	nc := connect(t, url)
	frame := func(kind byte, off int64, payload []byte) []byte {
		b := make([]byte, shim.FramePrefix, shim.FramePrefix+len(payload))
		b[0] = kind
		binary.BigEndian.PutUint64(b[1:], uint64(off))
		return append(b, payload...)
	}
	sum := sha256.Sum256(claimed)
	if len(digest) > 0 && digest[0] == xfer.DigestHighway {
		sum = highwayhash.Sum(claimed, xfer.HighwayKey[:])
	}
	ctrl := nc.NewInbox()
	if _, err := nc.Subscribe(subject, func(req *nats.Msg) {
		for _, f := range [][]byte{
			frame(shim.FrameStart, 0, append([]byte{1}, digest...)),
			frame(shim.FrameData, 0, body),
			frame(shim.FrameEnd, int64(len(claimed)), sum[:]),
		} {
			_ = nc.PublishMsg(&nats.Msg{Subject: req.Reply, Reply: ctrl, Data: f}) //natssend:reviewed test: a hand-made responder
		}
	}); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
}

// A caller checks the digest its responder names: HighwayHash-256 from a
// responder of this version, SHA-256 from an older one (no digest in the
// start frame); a body that does not match either way is ErrStreamCorrupt,
// and a start frame naming a digest the caller did not offer breaks the
// stream before any byte is read.
func TestStreamDigestKinds(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	good, bad := []byte("hello world"), []byte("hello there")
	digestResponder(t, s.URL(), "sha.ok", nil, good, good)
	digestResponder(t, s.URL(), "sha.bad", nil, good, bad)
	digestResponder(t, s.URL(), "hw.ok", []byte{xfer.DigestHighway}, good, good)
	digestResponder(t, s.URL(), "hw.bad", []byte{xfer.DigestHighway}, good, bad)
	digestResponder(t, s.URL(), "sha.named", []byte{xfer.DigestSHA256}, good, good)
	digestResponder(t, s.URL(), "unknown", []byte{7}, good, good)
	c := shim.NewClient(connect(t, s.URL()))
	for _, tc := range []struct {
		subject string
		want    error // nil: the body and io.EOF
	}{
		{"sha.ok", nil}, {"hw.ok", nil}, {"sha.named", nil},
		{"sha.bad", shim.ErrStreamCorrupt}, {"hw.bad", shim.ErrStreamCorrupt},
		{"unknown", shim.ErrStreamProtocol},
	} {
		rs, err := c.RequestStream(context.Background(), tc.subject, nil, shim.StreamIdle(300*time.Millisecond))
		if err == nil {
			var got []byte
			got, err = readAll(t, rs)
			if tc.want == nil && !bytes.Equal(got, good) {
				t.Errorf("%s: read %q", tc.subject, got)
			}
		}
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("%s: %v", tc.subject, err)
		case tc.want != nil && (!errors.Is(err, tc.want) || shim.Classify(err) != shim.OutcomeUnknown):
			t.Errorf("%s: %v; want %v", tc.subject, err, tc.want)
		}
	}
}

// A responder of this version answers a caller that offers no digest
// beyond SHA-256 (an older caller: three fields in HeaderStream) with a
// start frame naming none and an end frame carrying the body's SHA-256,
// and a caller that offers HighwayHash-256 with that.
func TestStreamDigestForOlderCaller(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	nc := connect(t, s.URL())
	body := payload(200<<10, 5)
	if _, err := shim.Serve(nc, "digest", shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		_, err := w.Write(body)
		return err
	})); err != nil {
		t.Fatal(err)
	}
	sha, hw := sha256.Sum256(body), highwayhash.Sum(body, xfer.HighwayKey[:])
	for _, tc := range []struct {
		marker string
		start  []byte // the start frame's payload
		sum    []byte
	}{
		{"1 1048576 5000", []byte{1}, sha[:]},
		{"1 1048576 5000 2000", []byte{1}, sha[:]},
		{"1 1048576 5000 0 hw256", []byte{1, xfer.DigestHighway}, hw[:]},
		{"1 1048576 5000 0 future,hw256", []byte{1, xfer.DigestHighway}, hw[:]},
		{"1 1048576 5000 0 future", []byte{1}, sha[:]},
	} {
		raw := connect(t, s.URL())
		inbox := raw.NewInbox()
		sub, err := raw.SubscribeSync(inbox)
		if err != nil {
			t.Fatal(err)
		}
		req := &nats.Msg{Subject: "digest", Reply: inbox, Header: nats.Header{shim.HeaderStream: {tc.marker}}}
		if err := raw.PublishMsg(req); err != nil { //natssend:reviewed test: a hand-made caller
			t.Fatal(err)
		}
		var got []byte
		for done := false; !done; {
			m, err := sub.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatalf("%q: %v after %d bytes", tc.marker, err, len(got))
			}
			if len(m.Data) < shim.FramePrefix {
				t.Fatalf("%q: a frame of %d bytes", tc.marker, len(m.Data))
			}
			switch kind, p := m.Data[0], m.Data[shim.FramePrefix:]; kind {
			case shim.FrameStart:
				if !bytes.Equal(p, tc.start) {
					t.Errorf("%q: start frame %v; want %v", tc.marker, p, tc.start)
				}
			case shim.FrameData:
				got = append(got, p...)
			case shim.FrameEnd:
				if !bytes.Equal(got, body) || !bytes.Equal(p, tc.sum) {
					t.Errorf("%q: %d bytes, end digest %x; want %x", tc.marker, len(got), p, tc.sum)
				}
				// The final acknowledgement: the responder is done.
				n := int64(len(got))
				_ = raw.Publish(m.Reply, xfer.AckBody(n, n, true)) //natssend:reviewed test: the hand-made caller's final ack
				done = true
			}
		}
		_ = raw.Flush()
		raw.Close()
	}
}
