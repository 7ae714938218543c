package faultmatrix_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

const (
	limit   = 16 << 10 // the server's max_payload
	bigSize = 96 << 10 // a payload above it: 7 chunks of a claim check
	subject = "svc.op"
	bucket  = "cc"
	ttl     = 10 * time.Minute

	long   = 20 * time.Second // the deadline of calls whose row is not about the deadline
	short  = 2 * time.Second  // the deadline of calls that can only end by it (a lost reply)
	settle = 10 * time.Second // the bound for clean-ups and recoveries
)

// Protocol points.
var (
	chunks = "$O." + bucket + ".C.>"
	metas  = "$O." + bucket + ".M.>"
)

// env is one row's world: a server, the caller's and the responder's
// connections each through a proxy of its own, a direct admin connection,
// and a claim-check store on each connection (one bucket).
type env struct {
	t        *testing.T
	s        *natstest.Server
	cp, rp   *natstest.Proxy // the caller's and the responder's
	caller   *nats.Conn
	resp     *nats.Conn
	admin    *nats.Conn
	cst, rst *claimcheck.Store // on caller and resp
	ast      *claimcheck.Store // on admin, for inspection
	h        *handler
	inbox    atomic.Value        // the reply subject of the caller's latest request
	counter  *natstest.Trigger   // a row's counting rule, for its check
	faults   []*natstest.Trigger // the row's faults: each must have happened
}

// expect records a fault's trigger: the row fails if it never fired.
func (e *env) expect(t *natstest.Trigger) *natstest.Trigger {
	e.faults = append(e.faults, t)
	return t
}

// checkFaults fails the row for every fault that did not happen (a
// fault's hook, such as a restart, may still be finishing).
func (e *env) checkFaults() {
	e.t.Helper()
	for i, f := range e.faults {
		select {
		case <-f.Fired():
		case <-time.After(settle):
			e.t.Errorf("fault %d of the row never happened", i+1)
		}
	}
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, s: natstest.Start(t, natstest.MaxPayload(limit), natstest.JetStream())}
	e.admin = dial(t, e.s.URL())
	e.ast = store(t, e.admin)
	e.cp, e.rp = e.s.Proxy(t), e.s.Proxy(t)
	e.caller, e.resp = dial(t, e.cp.URL()), dial(t, e.rp.URL())
	e.cst, e.rst = store(t, e.caller), store(t, e.resp)
	e.inbox.Store("")
	e.cp.On(natstest.Rule{Dir: natstest.ToServer, Subject: subject, Every: true,
		Hook: func(f natstest.Frame) { e.inbox.Store(f.Reply) }})
	return e
}

func dial(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := shim.Connect(url, nats.ReconnectWait(20*time.Millisecond), nats.ReconnectJitter(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func store(t *testing.T, nc *nats.Conn, opts ...claimcheck.Option) *claimcheck.Store {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	st, err := claimcheck.New(ctx, js, append([]claimcheck.Option{claimcheck.WithBucket(bucket), claimcheck.WithTTL(ttl)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// replyMsg matches the reply to the caller's latest request.
func (e *env) replyMsg(f natstest.Frame) bool {
	in, _ := e.inbox.Load().(string)
	return in != "" && f.Subject == in
}

// noResponders matches the server's 503 status to the caller's request.
func (e *env) noResponders(f natstest.Frame) bool {
	return e.replyMsg(f) && bytes.HasPrefix(f.Header, []byte("NATS/1.0 503"))
}

// down cuts p's links and keeps them down until the returned function
// (also registered as a cleanup) is called.
func down(t *testing.T, p *natstest.Proxy) func() {
	p.SetDown(true)
	p.Cut()
	var once sync.Once
	up := func() { once.Do(func() { p.SetDown(false) }) }
	t.Cleanup(up)
	return up
}

// leftoverIn returns the messages (chunks and meta data) left in st's
// bucket and, when there are any, its subjects: "M.<name>" for an
// object's meta data (one per object, deleted or not), "C.<nuid>" for
// chunks, each with its message count.
func leftoverIn(st *claimcheck.Store) (uint64, []string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	js, err := jetstream.New(st.Conn())
	if err != nil {
		return 0, nil, err
	}
	stream, err := js.Stream(ctx, "OBJ_"+st.Bucket())
	if err != nil {
		return 0, nil, err
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(">"))
	if err != nil {
		return 0, nil, err
	}
	var subjects []string
	for subj, n := range info.State.Subjects {
		subjects = append(subjects, fmt.Sprintf("%s×%d", strings.TrimPrefix(subj, "$O."+st.Bucket()+"."), n))
	}
	sort.Strings(subjects)
	return info.State.Msgs, subjects, nil
}

// objectsIn counts the objects (meta data subjects) among subjects.
func objectsIn(subjects []string) int {
	n := 0
	for _, s := range subjects {
		if strings.HasPrefix(s, "M.") {
			n++
		}
	}
	return n
}

// purgeBucket purges the bucket's stream: the claim checks in flight can
// no longer be resolved.
func (e *env) purgeBucket() {
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	js, err := jetstream.New(e.admin)
	if err == nil {
		var s jetstream.Stream
		if s, err = js.Stream(ctx, "OBJ_"+bucket); err == nil {
			err = s.Purge(ctx)
		}
	}
	if err != nil {
		e.t.Errorf("purging the bucket: %v", err)
	}
}

// checkLeft checks what the bucket holds once clean-ups are done: objects
// (listed) complete objects and nothing else when objects >= 0; after a
// crash (objects < 0) anything, removed by the bucket's TTL.
func (e *env) checkLeft(objects int) {
	checkLeftIn(e.t, e.ast, objects)
}

func checkLeftIn(t *testing.T, st *claimcheck.Store, objects int) {
	t.Helper()
	if objects < 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		status, err := st.ObjectStore().Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if status.TTL() != ttl {
			t.Errorf("bucket TTL %v, want %v: leftovers of a crash must expire", status.TTL(), ttl)
		}
		return
	}
	var msgs uint64
	var names []string
	var lerr error
	ok := func() bool {
		msgs, names, lerr = leftoverIn(st)
		if lerr != nil {
			return false
		}
		if objects == 0 {
			return msgs == 0
		}
		return objectsIn(names) == objects && msgs > uint64(objects)
	}
	deadline := time.Now().Add(settle)
	for !ok() {
		if time.Now().After(deadline) {
			t.Errorf("bucket after %v: %d stream messages on %q (err %v); want %d whole objects and nothing else", settle, msgs, names, lerr, objects)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// payload returns n pseudo-random bytes.
func payload(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// wantErr is what a row expects of an error.
type wantErr struct {
	outcome shim.Outcome
	code    string  // the *shim.Error's Code; "" for any
	is      []error // errors.Is targets
	not     []error // errors.Is must be false
	sent    *bool   // the *shim.Error's Sent; nil for either
}

var (
	yes = func() *bool { b := true; return &b }()
	no  = func() *bool { b := false; return &b }()
)

func (w wantErr) check(t *testing.T, err error) {
	t.Helper()
	if got := shim.Classify(err); got != w.outcome {
		t.Errorf("Classify = %v, want %v (err: %v)", got, w.outcome, err)
	}
	if w.outcome == shim.OutcomeOK {
		return
	}
	var se *shim.Error
	hasSE := errors.As(err, &se)
	if (w.code != "" || w.sent != nil) && !hasSE {
		t.Errorf("error %v (%T) is not a *shim.Error", err, err)
	}
	if hasSE && w.code != "" && se.Code != w.code {
		t.Errorf("Code = %s, want %s (err: %v)", se.Code, w.code, err)
	}
	if hasSE && w.sent != nil && se.Sent != *w.sent {
		t.Errorf("Sent = %v, want %v (err: %v)", se.Sent, *w.sent, err)
	}
	for _, target := range w.is {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(err, %v) = false (err: %v)", target, err)
		}
	}
	for _, target := range w.not {
		if errors.Is(err, target) {
			t.Errorf("errors.Is(err, %v) = true (err: %v)", target, err)
		}
	}
}

// restart restarts the server with the row's options, keeping its data.
func (e *env) restart() { e.s.Restart(natstest.MaxPayload(limit), natstest.JetStream()) }
