package claimcheck_test

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
)

// PrepareLimit decides against the lower of the connection's limit and the
// caller's cap, at the exact byte, with the same input checks as Prepare.
func TestPrepareLimit(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	nc, js := connect(t, s.URL())
	st := newStore(t, js)
	if st.Conn() != nc {
		t.Fatal("Conn is not the Store's connection")
	}
	const capBytes = 4096
	const reserve = 20
	h := nats.Header{"K": {"v"}}
	atCap := capBytes - reserve - (12 + len("K: v\r\n"))
	for _, tc := range []struct {
		body  int
		cap   int64
		claim bool
	}{
		{atCap, capBytes, false},
		{atCap + 1, capBytes, true},
		{atCap + 1, 0, false},            // no cap: the connection's limit
		{limit - reserve - 18, 0, false}, // exactly at the connection's limit
		{limit - reserve - 17, 0, true},  // one over
		{atCap + 1, 2 * limit, false},    // a cap above the connection's limit does not raise it
		{limit - reserve - 17, 2 * limit, true},
	} {
		m := &nats.Msg{Subject: "rpc", Header: h, Data: payload(tc.body, 1)}
		ref, err := st.PrepareLimit(ctxT(t), m, reserve, tc.cap)
		if err != nil {
			t.Fatalf("body %d, cap %d: %v", tc.body, tc.cap, err)
		}
		if got := ref != m; got != tc.claim || claimcheck.IsClaimCheck(ref) != tc.claim {
			t.Fatalf("body %d, cap %d: claim check %v, want %v", tc.body, tc.cap, got, tc.claim)
		}
		if tc.claim {
			data, err := st.Resolve(ctxT(t), ref)
			if err != nil || len(data) != tc.body {
				t.Fatalf("resolve: %d bytes, %v", len(data), err)
			}
			if err := st.Discard(ctxT(t), ref); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("%d messages left", n)
	}
	// Input checks come first, and headers that cannot fit the cap even
	// as a reference are ErrTooLarge: nothing stored.
	if _, err := st.PrepareLimit(ctxT(t), &nats.Msg{Subject: "bad subject", Data: make([]byte, 10)}, 0, 100); !errors.Is(err, nats.ErrBadSubject) {
		t.Fatalf("bad subject: %v", err)
	}
	if _, err := st.PrepareLimit(ctxT(t), &nats.Msg{Subject: "rpc", Data: make([]byte, 10)}, -1, 100); !errors.Is(err, claimcheck.ErrInvalidOption) {
		t.Fatalf("negative reserve: %v", err)
	}
	if _, err := st.PrepareLimit(ctxT(t), &nats.Msg{Subject: "rpc", Header: nats.Header{"K": {stringOf(300)}}, Data: make([]byte, 1000)}, 0, 200); !errors.Is(err, claimcheck.ErrTooLarge) || !errors.Is(err, claimcheck.ErrNotPublished) {
		t.Fatalf("headers above the cap: %v", err)
	}
	if n := bucketMsgs(t, st); n != 0 {
		t.Fatalf("%d messages left", n)
	}
}

func stringOf(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}
