package xfer_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/natssend/natssend/internal/xfer"
)

// Every frame kind against a caller that received 1000 bytes and granted
// up to 4096: at, below and above what was delivered, at and past the
// credit's edge, with odd payloads.
func TestCheckFrame(t *testing.T) {
	rc := xfer.Receiver{Recv: 1000, MaxGrant: 4096}
	for _, tc := range []struct {
		name string
		kind byte
		off  int64
		n    int
		bad  string // a part of the refusal; "" for none
	}{
		{"start at 0 (a duplicate)", xfer.Start, 0, 1, ""},
		{"start at an offset", xfer.Start, 1000, 1, "start frame at offset"},
		{"data in order", xfer.Data, 1000, 100, ""},
		{"data up to the credit's edge", xfer.Data, 1000, 3096, ""},
		{"data one byte past the credit", xfer.Data, 1000, 3097, "beyond the credit"},
		{"data starting past the credit", xfer.Data, 4096, 1, "beyond the credit"},
		{"data: a duplicate", xfer.Data, 0, 1000, ""},
		{"data: an overlap", xfer.Data, 500, 1000, ""},
		{"data: a gap", xfer.Data, 2000, 100, ""},
		{"data: empty at the credit", xfer.Data, 4096, 0, ""},
		{"data: a negative offset", xfer.Data, -1, 1, "negative offset"},
		{"data: an offset that overflows with its payload", xfer.Data, 1<<63 - 1, 2, "beyond the credit"},
		{"end at what was delivered", xfer.End, 1000, 32, ""},
		{"end below what was delivered", xfer.End, 999, 32, "below the 1000 bytes delivered"},
		{"end ahead (a gap)", xfer.End, 2000, 32, ""},
		{"end at the credit's edge", xfer.End, 4096, 32, ""},
		{"end beyond the credit", xfer.End, 4097, 32, "beyond the credit"},
		{"end with a short digest", xfer.End, 1000, 31, "31-byte digest"},
		{"end with a long digest", xfer.End, 1000, 33, "33-byte digest"},
		{"error frame at what was delivered", xfer.Error, 1000, 0, ""},
		{"error frame below what was delivered", xfer.Error, 0, 0, "below"},
		{"error frame beyond the credit", xfer.Error, 5000, 0, "beyond the credit"},
		{"heartbeat at what was delivered", xfer.Heartbeat, 1000, 1, ""},
		{"heartbeat ahead", xfer.Heartbeat, 3000, 1, ""},
		{"heartbeat below what was delivered", xfer.Heartbeat, 10, 1, "below"},
		{"heartbeat beyond the credit", xfer.Heartbeat, 4097, 1, "beyond the credit"},
		{"a control kind on the frame side", xfer.Ack, 1000, 0, "unknown kind"},
		{"kind 0", 0, 0, 0, "unknown kind"},
	} {
		got := rc.CheckFrame(tc.kind, tc.off, tc.n)
		if (tc.bad == "") != (got == "") || !strings.Contains(got, tc.bad) {
			t.Errorf("%s: %q; want %q", tc.name, got, tc.bad)
		}
	}
}

func ack(recv, grant int64, final byte) []byte {
	b := make([]byte, 18)
	b[0] = xfer.Ack
	binary.BigEndian.PutUint64(b[1:9], uint64(recv))
	binary.BigEndian.PutUint64(b[9:17], uint64(grant))
	b[17] = final
	return b
}

func resend(from int64, start byte) []byte {
	b := make([]byte, 10)
	b[0] = xfer.Resend
	binary.BigEndian.PutUint64(b[1:9], uint64(from))
	b[9] = start
	return b
}

// Every control kind against a responder that sent 5000 bytes of a
// stream with a 4096-byte window, before and after its end.
func TestParseCtl(t *testing.T) {
	running := xfer.Sender{Window: 4096, Sent: 5000}
	ended := xfer.Sender{Window: 4096, Sent: 5000, Ended: true}
	for _, tc := range []struct {
		name string
		sd   xfer.Sender
		b    []byte
		bad  string
		want xfer.Ctl
	}{
		{"ack", running, ack(1000, 5096, 0), "", xfer.Ctl{Kind: xfer.Ack, Recv: 1000, Grant: 5096}},
		{"ack: grant at the window's edge", running, ack(5000, 9096, 0), "", xfer.Ctl{Kind: xfer.Ack, Recv: 5000, Grant: 9096}},
		{"ack: grant one byte past the window", running, ack(5000, 9097, 0), "beyond the 4096-byte window", xfer.Ctl{}},
		{"ack: a stale one (a lower grant)", running, ack(0, 10, 0), "", xfer.Ctl{Kind: xfer.Ack, Grant: 10}},
		{"ack: of bytes never sent", running, ack(5001, 5001, 0), "5001 bytes, 5000 sent", xfer.Ctl{}},
		{"ack: a negative recv", running, ack(-1, 0, 0), "sent", xfer.Ctl{}},
		{"ack: a negative grant", running, ack(0, -1, 0), "beyond", xfer.Ctl{}},
		{"ack: final before the end", running, ack(5000, 9096, 1), "before the end", xfer.Ctl{}},
		{"ack: final after the end, for less than all", ended, ack(4000, 8096, 1), "before the end", xfer.Ctl{}},
		{"ack: final after the end", ended, ack(5000, 9096, 1), "", xfer.Ctl{Kind: xfer.Ack, Recv: 5000, Grant: 9096, Final: true}},
		{"ack: a flag that is not 0 or 1", running, ack(0, 0, 2), "malformed", xfer.Ctl{}},
		{"ack: short", running, ack(0, 0, 0)[:17], "malformed", xfer.Ctl{}},
		{"ack: long", running, append(ack(0, 0, 0), 0), "malformed", xfer.Ctl{}},
		{"resend", running, resend(1000, 0), "", xfer.Ctl{Kind: xfer.Resend, From: 1000}},
		{"resend: with the start frame", running, resend(0, 1), "", xfer.Ctl{Kind: xfer.Resend, Start: true}},
		{"resend: from what was sent", running, resend(5000, 0), "", xfer.Ctl{Kind: xfer.Resend, From: 5000}},
		{"resend: from beyond what was sent", running, resend(5001, 0), "5001, 5000 sent", xfer.Ctl{}},
		{"resend: a negative offset", running, resend(-5, 0), "sent", xfer.Ctl{}},
		{"resend: a flag that is not 0 or 1", running, resend(0, 7), "malformed", xfer.Ctl{}},
		{"resend: short", running, resend(0, 0)[:9], "malformed", xfer.Ctl{}},
		{"cancel", running, []byte{xfer.Cancel}, "", xfer.Ctl{Kind: xfer.Cancel}},
		{"cancel: with a payload", running, []byte{xfer.Cancel, 0}, "malformed", xfer.Ctl{}},
		{"cancel: broken", running, []byte{xfer.Cancel, xfer.CancelBroken}, "", xfer.Ctl{Kind: xfer.Cancel, Broken: true}},
		{"cancel: broken, then more", running, []byte{xfer.Cancel, xfer.CancelBroken, 0}, "malformed", xfer.Ctl{}},
		{"empty", running, nil, "empty", xfer.Ctl{}},
		{"a frame kind on the control side", running, []byte{xfer.Data}, "unknown kind", xfer.Ctl{}},
		{"garbage", running, []byte("garbage"), "unknown kind", xfer.Ctl{}},
	} {
		got, bad := tc.sd.ParseCtl(tc.b)
		if (tc.bad == "") != (bad == "") || !strings.Contains(bad, tc.bad) {
			t.Errorf("%s: %q; want %q", tc.name, bad, tc.bad)
			continue
		}
		if bad == "" && got != tc.want {
			t.Errorf("%s: %+v; want %+v", tc.name, got, tc.want)
		}
	}
}
