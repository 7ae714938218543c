package interop_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

// rpcCase is one call peer.mjs's call scenario makes; Go makes the same
// call with a shim Client set up alike and both must see the same code
// and outcome (docs/protocol.md, 4).
type rpcCase struct {
	Name       string `json:"name"`
	Subject    string `json:"subject"`
	Body       string `json:"body,omitempty"`
	Size       int    `json:"size,omitempty"`       // a pattern body of this size instead
	Accept     bool   `json:"accept,omitempty"`     // the caller reads claim checks
	MaxPayload int    `json:"maxPayload,omitempty"` // the caller's announced limit; 0: its connection's
	Timeout    int    `json:"timeout,omitempty"`    // ms; 0: 10 s
	OpID       string `json:"opId,omitempty"`
}

// rpcResult is a call's code ("OK" without error), outcome and reply.
type rpcResult struct {
	Name, Code, Outcome, Sha256, Text, Message string
}

// serveShim serves every responder of the RPC table on nc.
func serveShim(t *testing.T, nc *nats.Conn, st *claimcheck.Store) {
	t.Helper()
	unary := func(subject string, fn shim.HandlerFunc, opts ...shim.HandlerOption) {
		if _, err := shim.Serve(nc, subject, shim.Unary(fn, opts...)); err != nil {
			t.Fatal(err)
		}
	}
	cc := shim.ServeClaimChecks(st)
	unary("rpc.echo", func(_ context.Context, m *nats.Msg) ([]byte, error) { return m.Data, nil }, cc)
	unary("rpc.headers", func(ctx context.Context, m *nats.Msg) ([]byte, error) {
		_, ok := ctx.Deadline()
		return []byte(map[bool]string{true: "deadline", false: "none"}[ok] + " op=" + shim.OperationIDFrom(ctx)), nil
	})
	unary("rpc.invalid", func(context.Context, *nats.Msg) ([]byte, error) {
		return nil, shim.InvalidArgument("field %q is required", "id")
	})
	unary("rpc.reject", func(context.Context, *nats.Msg) ([]byte, error) {
		return nil, shim.Reject("NOT_FOUND", "no such order")
	})
	unary("rpc.conflict", func(context.Context, *nats.Msg) ([]byte, error) {
		return nil, &shim.Error{Code: "409", Message: "conflict"}
	})
	unary("rpc.unavailable", func(context.Context, *nats.Msg) ([]byte, error) {
		return nil, &shim.Error{Code: "503", Message: "later"}
	})
	unary("rpc.internal", func(context.Context, *nats.Msg) ([]byte, error) { return nil, errors.New("boom") })
	unary("rpc.panic", func(context.Context, *nats.Msg) ([]byte, error) { panic("boom") })
	unary("rpc.big", func(context.Context, *nats.Msg) ([]byte, error) { return pattern(200_000, 0), nil }, cc)
	unary("rpc.reply2000", func(context.Context, *nats.Msg) ([]byte, error) { return pattern(2000, 0), nil }, cc)
	unary("rpc.sha", func(_ context.Context, m *nats.Msg) ([]byte, error) { return []byte(sum(m.Data)), nil }, cc)
	unary("rpc.sha-nocc", func(_ context.Context, m *nats.Msg) ([]byte, error) { return []byte(sum(m.Data)), nil })
	// Answers only when the test ends: no reply can race the caller's deadline.
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	unary("rpc.slow", func(context.Context, *nats.Msg) ([]byte, error) { <-release; return nil, nil })
	// A responder that answers with a reference to nothing (an object
	// deleted or never stored): the caller cannot read the reply.
	if _, err := nc.Subscribe("rpc.lost", func(m *nats.Msg) {
		_ = m.RespondMsg(&nats.Msg{Header: nats.Header{ //natssend:reviewed a hand-made reference to a missing object
			claimcheck.HeaderRef: {"aaaaaaaaaaaaaaaaaaaaaaaaaa"}, claimcheck.HeaderSize: {"100000"}, claimcheck.HeaderBucket: {claimcheck.DefaultBucket},
		}})
	}); err != nil {
		t.Fatal(err)
	}
}

// rpcCases is the table: every code and outcome a shim responder can
// give a caller, claim-checked requests and replies included.
var rpcCases = []rpcCase{
	{Name: "ok", Subject: "rpc.echo", Body: "hello"},
	{Name: "headers", Subject: "rpc.headers", OpID: "op-7f3a"},
	{Name: "invalid argument", Subject: "rpc.invalid"},
	{Name: "rejected with a code", Subject: "rpc.reject"},
	{Name: "4xx", Subject: "rpc.conflict"},
	{Name: "5xx", Subject: "rpc.unavailable"},
	{Name: "internal", Subject: "rpc.internal"},
	{Name: "panic", Subject: "rpc.panic"},
	{Name: "reply too large", Subject: "rpc.big"},
	{Name: "claim-checked reply", Subject: "rpc.big", Accept: true},
	{Name: "reply over the caller's limit", Subject: "rpc.reply2000", MaxPayload: 1000},
	{Name: "claim-checked reply under the caller's limit", Subject: "rpc.reply2000", MaxPayload: 1000, Accept: true},
	{Name: "claim-checked request", Subject: "rpc.sha", Size: 300_000, Accept: true},
	{Name: "claim-checked request, not served", Subject: "rpc.sha-nocc", Size: 300_000, Accept: true},
	{Name: "request too large", Subject: "rpc.sha", Size: 300_000},
	{Name: "deadline", Subject: "rpc.slow", Timeout: 300},
	{Name: "no responders", Subject: "rpc.nobody"},
	{Name: "reply lost", Subject: "rpc.lost", Accept: true},
	{Name: "reply unreadable", Subject: "rpc.lost"},
}

// goCall makes c's call with a shim Client set up as c says.
func goCall(t *testing.T, url string, st *claimcheck.Store, c rpcCase) rpcResult {
	t.Helper()
	nc, err := shim.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if c.MaxPayload > 0 {
		if err := shim.CapPayload(nc, int64(c.MaxPayload)); err != nil {
			t.Fatal(err)
		}
	}
	var opts []shim.Option
	if c.Accept {
		opts = append(opts, shim.WithClaimChecks(st))
	}
	var copts []shim.CallOption
	if c.Timeout > 0 {
		copts = append(copts, shim.Timeout(time.Duration(c.Timeout)*time.Millisecond))
	}
	if c.OpID != "" {
		copts = append(copts, shim.OperationID(c.OpID))
	}
	body := []byte(c.Body)
	if c.Size > 0 {
		body = pattern(c.Size, 0)
	} else if c.Body == "" {
		body = []byte("hello")
	}
	reply, err := shim.NewClient(nc, opts...).Request(context.Background(), c.Subject, body, copts...)
	if err != nil {
		d := shim.Describe(err)
		return rpcResult{Name: c.Name, Code: d.Code, Outcome: d.Outcome().String(), Message: err.Error()}
	}
	r := rpcResult{Name: c.Name, Code: "OK", Outcome: "ok", Sha256: sum(reply.Data)}
	if len(reply.Data) < 200 {
		r.Text = string(reply.Data)
	}
	return r
}

// TestJSCallsShimResponders: a nats.js caller gets every code and
// outcome of the table from shim responders, the same a shim Client
// gets, and resolves (and deletes) claim-checked replies itself.
func TestJSCallsShimResponders(t *testing.T) {
	requireInterop(t)
	s, nc, js := server(t)
	st := store(t, js)
	serveShim(t, nc, st)
	cases, err := json.Marshal(rpcCases)
	if err != nil {
		t.Fatal(err)
	}
	p := runPeer(t, "call", s.URL(), "INTEROP_CASES="+string(cases))
	var res struct{ Results []rpcResult }
	p.wait(&res)
	if len(res.Results) != len(rpcCases) {
		t.Fatalf("%d results for %d cases", len(res.Results), len(rpcCases))
	}
	for i, c := range rpcCases {
		jsr, gor := res.Results[i], goCall(t, s.URL(), st, c)
		jsr.Message, gor.Message = "", ""
		if jsr != gor {
			t.Errorf("%s: nats.js got %+v, shim got %+v", c.Name, res.Results[i], goCall(t, s.URL(), st, c))
		}
		t.Logf("%-45s %-24s %s", c.Name, jsr.Code, jsr.Outcome)
	}
	if n := bucketObjects(t, st); n != 0 {
		t.Errorf("%d objects left in the bucket: each caller deletes its request and reply payloads", n)
	}
}

// bucketObjects counts the objects (not deleted) in st's bucket.
func bucketObjects(t *testing.T, st *claimcheck.Store) int {
	t.Helper()
	list, err := st.ObjectStore().List(ctxT(t, time.Minute))
	if err != nil {
		return 0 // jetstream.ErrNoObjectsFound
	}
	return len(list)
}
