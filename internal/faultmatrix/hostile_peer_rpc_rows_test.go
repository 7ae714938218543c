package faultmatrix_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

// The hostile peer of the RPC paths (request, Attempts, RequestMany,
// claim-checked requests and replies): an ordinary user of the account
// that subscribes to the service's subject as a second subscriber (so it
// sees every request and its reply subject) and answers, forges or
// redirects.

// peerOnly may subscribe to the service's subject and publish to it, and
// nothing else: no inbox, no allow_responses, no bucket.
var peerOnly = perms{pubAllow: []string{subject}, subAllow: []string{subject}}

// everything is every permission (the bucket's included).
var everything = perms{pubAllow: all, subAllow: all}

// spy subscribes the peer to the service's subject and calls f with each
// request it sees.
func spy(t *testing.T, peer *nats.Conn, f func(m *nats.Msg)) {
	t.Helper()
	if _, err := peer.Subscribe(subject, f); err != nil {
		t.Fatal(err)
	}
	if err := peer.Flush(); err != nil {
		t.Fatal(err)
	}
}

// forgedAnswer: a peer answers every request it sees with "forged"; the
// honest responder answers once the forgery has reached the server. With
// p the server drops the forgery (want the honest reply) or delivers it
// (can: want "forged").
func forgedAnswer(p perms, opts []shim.CallOption, want string) func(t *testing.T) {
	return func(t *testing.T) {
		e := newSecEnv(t, map[string]perms{peerUser: p})
		peer := e.rawAs(peerUser)
		forged := make(chan struct{}, 16)
		spy(t, peer, func(m *nats.Msg) {
			_ = peer.Publish(m.Reply, []byte("forged")) //natssend:reviewed a hostile peer's forged reply, small
			_ = peer.Flush()
			forged <- struct{}{}
		})
		rnc := e.as("")
		if _, err := shim.Serve(rnc, subject, shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) {
			select {
			case <-forged:
			case <-time.After(settle):
			}
			return []byte("reply"), nil
		})); err != nil {
			t.Fatal(err)
		}
		_ = rnc.Flush()
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		m, err := shim.NewClient(e.as("")).Request(ctx, subject, []byte("x"), opts...)
		if err != nil || string(m.Data) != want {
			t.Errorf("reply %v, %v; want %q", m, err, want)
		}
	}
}

// forgedReference: a peer that is (or races) the responder answers with a
// claim check copied from another user's payload. The caller's read
// refuses it (the payload was stored for another subject) and its
// clean-up does not delete it: REPLY_LOST at once, the payload intact.
// late: the peer sends it after the call ended (the late-reply clean-up
// must not delete it either).
func forgedReference(late bool) func(t *testing.T) {
	return func(t *testing.T) {
		e := newSecEnv(t, map[string]perms{peerUser: everything})
		ref, data := storedEvent(t, e)
		peer := e.rawAs(peerUser)
		var seen atomic.Value
		forge := func(reply string) {
			_ = peer.PublishMsg(&nats.Msg{Subject: reply, Header: ref.Header}) //natssend:reviewed a hostile peer's forged reference, small
			_ = peer.Flush()
		}
		spy(t, peer, func(m *nats.Msg) {
			seen.Store(m.Reply)
			if !late {
				forge(m.Reply)
			}
		})
		if late {
			serveReply(t, e.as(""), nil, []byte("reply"), 0)
		}
		c := shim.NewClient(e.as(""), shim.WithClaimChecks(store(t, e.as(""))))
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		var err error
		took := timed(func() { _, err = c.Request(ctx, subject, []byte("x")) })
		t.Logf("after %v: %v", took, err)
		if late {
			ok.check(t, err)
			forge(seen.Load().(string))
			time.Sleep(time.Second) // the late reply's clean-up runs on its own goroutine
		} else {
			wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeReplyLost, is: []error{shim.ErrReplyLost, claimcheck.ErrSubjectMismatch}, sent: yes}.check(t, err)
			quick(t, took)
		}
		intact(t, e.ast, ref, data)
	}
}

// nextReplySubject guesses the caller's next reply subject from one seen
// (a prefix, a counter, the attempt), as issue 42 reproduced; "" when it
// has no such form.
func nextReplySubject(seen string) string {
	toks := strings.Split(seen, ".")
	if len(toks) < 3 {
		return ""
	}
	n, err := strconv.ParseUint(toks[len(toks)-2], 36, 64)
	if err != nil {
		return ""
	}
	return strings.Join(toks[:len(toks)-2], ".") + "." + strconv.FormatUint(n+1, 36) + ".1"
}

// squatted: a peer that saw one request of the caller predicts the next
// reply subject and either plants an object under its reply object name
// (bucket write access) or, with no bucket access, sends the honest
// service a request with that reply subject (a confused deputy). The
// caller's next call must still get its claim-checked reply.
func squatted(plant bool) func(t *testing.T) {
	return func(t *testing.T) {
		p := denying([]string{"$O.>", "$JS.>"}, []string{"$O.>"})
		if plant {
			p = everything
		}
		e := newSecEnv(t, map[string]perms{peerUser: p})
		peer := e.rawAs(peerUser)
		seen := make(chan *nats.Msg, 4)
		spy(t, peer, func(m *nats.Msg) { seen <- m })
		reply := payload(bigSize, 2)
		serveReply(t, e.as(""), store(t, e.as("")), reply, 0)
		c := shim.NewClient(e.as(""), shim.WithClaimChecks(store(t, e.as(""))))
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		if _, err := c.Request(ctx, subject, []byte("first")); err != nil {
			t.Fatal(err)
		}
		first := <-seen
		if next := nextReplySubject(first.Reply); next != "" && plant {
			js, err := jetstream.New(peer)
			if err != nil {
				t.Fatal(err)
			}
			obs, err := js.ObjectStore(ctx, bucket)
			if err != nil {
				t.Fatal(err)
			}
			meta := jetstream.ObjectMeta{Name: subjectOnlyName(next), Metadata: map[string]string{"claim-check-subject": next}}
			if _, err := obs.Put(ctx, meta, bytes.NewReader([]byte("squat"))); err != nil {
				t.Fatal(err)
			}
		} else if next != "" {
			forged := &nats.Msg{Subject: subject, Reply: next, Header: first.Header, Data: []byte("deputy")}
			if err := peer.PublishMsg(forged); err != nil { //natssend:reviewed a hostile peer's request, small
				t.Fatal(err)
			}
			_ = peer.Flush()
			// Today the honest responder stores its reply under the victim's
			// name; a fixed one may store nothing: wait for it, not on it.
			for deadline := time.Now().Add(atOnce); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if _, names, err := leftoverIn(e.ast); err == nil && objectsIn(names) > 0 {
					break
				}
			}
		}
		var m *nats.Msg
		var err error
		took := timed(func() { m, err = c.Request(ctx, subject, []byte("second")) })
		if err != nil || !bytes.Equal(m.Data, reply) {
			t.Errorf("the caller's next call, after %v: %v; want its reply", took, err)
		}
	}
}

// forgedRequestReference: a peer sends the service a claim-checked
// request whose reference it copied from another user's payload (stored
// for another subject): the responder refuses it before the handler
// runs, and does not delete it.
func forgedRequestReference(t *testing.T) {
	e := newSecEnv(t, map[string]perms{peerUser: everything})
	ref, data := storedEvent(t, e)
	r := serveReply(t, e.as(""), store(t, e.as("")), []byte("reply"), 0)
	peer := e.rawAs(peerUser)
	m, err := peer.RequestMsg(&nats.Msg{Subject: subject, Header: ref.Header}, long) //natssend:reviewed a hostile peer's request, small
	if err != nil {
		t.Fatal(err)
	}
	if code := m.Header.Get(shim.HeaderErrorCode); code != shim.CodeClaimCheckUnresolved {
		t.Errorf("the responder answered %q %q; want %s", code, m.Header.Get(shim.HeaderError), shim.CodeClaimCheckUnresolved)
	}
	ranTimes(t, e.admin, r, 0)
	intact(t, e.ast, ref, data)
}

// manyForged: a peer that may not publish to inboxes answers every
// request: RequestMany yields exactly the honest replies.
func manyForged(t *testing.T) {
	e := newSecEnv(t, map[string]perms{peerUser: peerOnly})
	peer := e.rawAs(peerUser)
	spy(t, peer, func(m *nats.Msg) { _ = peer.Publish(m.Reply, []byte("forged")) }) //natssend:reviewed a hostile peer's forged reply, small
	rnc := e.as("")
	for i := range 2 {
		if _, err := shim.Serve(rnc, subject, shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) {
			time.Sleep(100 * time.Millisecond)
			return []byte("r" + strconv.Itoa(i)), nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	_ = rnc.Flush()
	var got []string
	for m, err := range shim.NewClient(e.as("")).RequestMany(context.Background(), subject, nil, shim.StallTimeout(time.Second)) {
		if err != nil {
			t.Errorf("error: %v", err)
			continue
		}
		got = append(got, string(m.Data))
	}
	if len(got) != 2 || strings.Contains(strings.Join(got, ","), "forged") {
		t.Errorf("replies %q; want r0 and r1 only", got)
	}
}

// unreadReplies: a raw caller that says it accepts claim checks and never
// reads nor deletes its replies makes the responder store each reply
// above the limit until the bucket's TTL: a documented "can" (exhaust),
// bounded by the bucket's limits and TTL, which the operator sets.
func unreadReplies(t *testing.T) {
	e := newSecEnv(t, map[string]perms{peerUser: {pubAllow: []string{subject}, subAllow: []string{"_INBOX.>"}}})
	serveReply(t, e.as(""), store(t, e.as("")), payload(bigSize, 2), 0)
	m, err := e.rawAs(peerUser).RequestMsg(&nats.Msg{Subject: subject, Header: nats.Header{shim.HeaderAcceptClaimCheck: {bucket}}}, long) //natssend:reviewed a hostile peer's request, small
	if err != nil || !claimcheck.IsClaimCheck(m) {
		t.Fatalf("reply %v, %v; want a claim check", m, err)
	}
	checkLeftIn(t, e.ast, 1)
	checkLeftIn(t, e.ast, -1) // and it expires
}

// replayed: a peer that may publish to inboxes replays a reply into the
// subject of the caller's previous call, again and again, while the next
// call waits: the next call takes only its own reply (a reply subject
// answers one call). cc: the Client with WithClaimChecks (its reply
// subjects are a connection's prefix, a call's token and the attempt).
func replayed(cc bool) func(t *testing.T) {
	return func(t *testing.T) {
		e := newSecEnv(t, map[string]perms{peerUser: everything})
		peer := e.rawAs(peerUser)
		seen := make(chan string, 4)
		spy(t, peer, func(m *nats.Msg) { seen <- m.Reply })
		serveReply(t, e.as(""), nil, []byte("reply"), 300*time.Millisecond)
		var opts []shim.Option
		if cc {
			opts = append(opts, shim.WithClaimChecks(store(t, e.as(""))))
		}
		c := shim.NewClient(e.as(""), opts...)
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		if _, err := c.Request(ctx, subject, []byte("first")); err != nil {
			t.Fatal(err)
		}
		old := <-seen
		stop := make(chan struct{})
		defer close(stop)
		every(stop, func() { _ = peer.Publish(old, []byte("stale")) }) //natssend:reviewed a hostile peer's replayed reply, small
		for i := range 3 {
			m, err := c.Request(ctx, subject, []byte("next"))
			if err != nil || string(m.Data) != "reply" {
				t.Errorf("call %d: %v, %v; want its own reply", i, m, err)
			}
		}
	}
}

// acceptAbove: a caller declares a max-payload far above the server's in
// its accept header: the responder still decides against its own limit
// (a claim check), never a reply that would close its connection, and
// serves the next request.
func acceptAbove(t *testing.T) {
	e := newSecEnv(t, map[string]perms{peerUser: {pubAllow: []string{subject}, subAllow: []string{"_INBOX.>"}}})
	rnc := e.as("")
	r := serveReply(t, rnc, store(t, rnc), payload(bigSize, 2), 0)
	peer := e.rawAs(peerUser)
	h := nats.Header{shim.HeaderAcceptClaimCheck: {bucket + "; max-payload=" + strconv.Itoa(64<<20)}, shim.HeaderMaxPayload: {strconv.Itoa(64 << 20)}}
	for i := range 2 {
		m, err := peer.RequestMsg(&nats.Msg{Subject: subject, Header: h}, long) //natssend:reviewed a hostile peer's request, small
		if err != nil || !claimcheck.IsClaimCheck(m) {
			t.Fatalf("request %d: %v, %v; want a claim check", i, m, err)
		}
	}
	if !rnc.IsConnected() {
		t.Error("the responder's connection was closed")
	}
	ranTimes(t, rnc, r, 2)
}

func hostileRPCRows() []secRow {
	row := func(path sendPath, name, pending string, run func(t *testing.T)) secRow {
		return secRow{path: path, column: columnHostile, name: name, pending: pending, run: run}
	}
	responses := perms{pubAllow: []string{subject}, subAllow: []string{subject}, responses: "{ max: 1, expires: \"1m\" }"}
	idAttempts := []shim.CallOption{shim.Attempts(3), shim.OperationID("op-1")}
	return []secRow{
		row(pRequest, "a peer that may not publish to inboxes cannot answer another caller's request", "", forgedAnswer(peerOnly, nil, "reply")),
		row(pRequest, "(can) a peer allowed the service's subject and allow_responses answers first: the caller takes its reply", "",
			forgedAnswer(responses, nil, "forged")),
		row(pRequest, "a reply replayed into the caller's inbox answers no later call", "", replayed(false)),
		row(pRequest, "a reply replayed into the inbox of a Client with claim checks answers no later call", "", replayed(true)),
		row(pCCReply, "a caller's accept header declaring a max-payload above the server's cannot make the responder overrun its limit", "", acceptAbove),
		row(pRequest, "a late forged reply naming another user's payload does not delete it", "", forgedReference(true)),
		row(pAttempts, "a peer that may not publish to inboxes cannot answer any attempt", "", forgedAnswer(peerOnly, idAttempts, "reply")),
		row(pMany, "a peer that may not publish to inboxes adds no reply", "", manyForged),
		row(pCCRequest, "a request referencing another user's payload: rejected before the handler, the payload intact", "", forgedRequestReference),
		row(pCCReply, "a reply referencing another user's payload: REPLY_LOST at once, the payload intact", "", forgedReference(false)),
		row(pCCReply, "(can) a caller that accepts claim checks and never reads them leaves each reply stored until the TTL", "", unreadReplies),
		row(pCCReply, "an object planted under the caller's next reply object name does not suppress its reply",
			"", squatted(true)),
		row(pCCReply, "a peer without bucket access sends the service a request with the caller's next reply subject: the caller still gets its reply",
			"", squatted(false)),
	}
}

// subjectOnlyName is the best name a peer without the caller's reply key
// can give a reply's object: the one the subject alone determines (the
// protocol before reply-key named replies so).
func subjectOnlyName(subject string) string {
	sum := sha256.Sum256([]byte("natssend reply\x00" + subject))
	return base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding).EncodeToString(sum[:16])
}
