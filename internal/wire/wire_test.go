package wire_test

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/internal/wire"
)

// TestValidHeaderKeyMatchesNatsGo checks every one-byte variation of a key
// against what nats.go accepts on a real connection.
func TestValidHeaderKeyMatchesNatsGo(t *testing.T) {
	s := natstest.Start(t)
	nc, err := nats.Connect(s.URL(), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for b := range 256 {
		key := "Key" + string([]byte{byte(b)})
		err := nc.PublishMsg(&nats.Msg{Subject: "k", Header: nats.Header{key: {"v"}}}) //natssend:reviewed probing nats.go's own header key check
		natsOK := !errors.Is(err, nats.ErrBadHeaderMsg)
		if err != nil && natsOK {
			t.Fatalf("byte %d: unexpected error %v", b, err)
		}
		if got := wire.ValidHeaderKey(key); got != natsOK {
			t.Errorf("ValidHeaderKey(%q) = %v, nats.go accepts it: %v", key, got, natsOK)
		}
	}
	if wire.ValidHeaderKey("") {
		t.Error("the empty key is not valid")
	}
}

func TestLineAndBlockSizes(t *testing.T) {
	h := map[string][]string{"Nats-Msg-Id": {" id-1 "}}
	if got, want := wire.HeaderSize(h), wire.EmptyBlockSize+wire.LineSize("Nats-Msg-Id", "id-1"); got != want {
		t.Fatalf("HeaderSize = %d, EmptyBlockSize+LineSize = %d", got, want)
	}
	if got := wire.MsgSize(nil, 7); got != 7 {
		t.Fatalf("MsgSize(nil, 7) = %d", got)
	}
}

// TestValidSubjectMatchesNatsGo compares ValidSubject with nats.go's own
// check on a real connection, for every one-byte variation of a subject.
func TestValidSubjectMatchesNatsGo(t *testing.T) {
	s := natstest.Start(t)
	nc, err := nats.Connect(s.URL(), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for b := range 256 {
		for _, subj := range []string{"a" + string([]byte{byte(b)}) + "b", "a.long.subject.over.sixteen" + string([]byte{byte(b)})} {
			err := nc.Publish(subj, nil) //natssend:reviewed probing nats.go's own subject check
			natsOK := !errors.Is(err, nats.ErrBadSubject)
			if got := wire.ValidSubject(subj); got != natsOK {
				t.Errorf("ValidSubject(%q) = %v, nats.go accepts it: %v", subj, got, natsOK)
			}
		}
	}
	if wire.ValidSubject("") {
		t.Error("the empty subject is not valid")
	}
}
