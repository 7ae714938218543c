package objstore

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
)

// TestFlightInboxesUnpredictable: the reply inboxes of a connection's
// batch requests share no counter: over 256 of them every one of the 16
// token characters takes many values (a counter's would keep its first
// characters and differ in the last), so a peer allowed to publish to
// inboxes cannot aim forged chunks at the next read from those it saw.
func TestFlightInboxesUnpredictable(t *testing.T) {
	s := natstest.Start(t)
	nc, err := nats.Connect(s.URL(), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	m := &mux{nc: nc, flights: make(map[string]*flight)}
	const n = 256
	seen := make([]map[byte]bool, 16)
	for i := range seen {
		seen[i] = map[byte]bool{}
	}
	for range n {
		f, inbox, err := m.open(1, NewBudget(1), 0)
		if err != nil {
			t.Fatal(err)
		}
		token := inbox[strings.LastIndexByte(inbox, '.')+1:]
		if len(token) != 16 {
			t.Fatalf("inbox %q: token of %d characters, want 16", inbox, len(token))
		}
		for i := range token {
			seen[i][token[i]] = true
		}
		f.close(true)
	}
	for i, s := range seen {
		if len(s) < 32 { // 64 possible; 256 random draws leave fewer than 32 with odds below 1e-20
			t.Errorf("token character %d took %d values over %d inboxes, want at least 32", i, len(s), n)
		}
	}
}
