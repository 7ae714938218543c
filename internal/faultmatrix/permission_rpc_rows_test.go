package faultmatrix_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

const (
	callerUser = "caller"
	respUser   = "resp"
	peerUser   = "peer"
)

var (
	directGets = []string{"$JS.API.DIRECT.GET.>", "$JS.API.STREAM.MSG.GET.>"}
	purge      = []string{"$JS.API.STREAM.PURGE.OBJ_" + bucket}
)

// metaLeft is the bug of the rows whose chunks the server denies.
const metaLeft = "an upload whose chunks the server denied leaves its meta data (a whole object's size and chunk count, no chunks) " +
	"in the bucket until the TTL: the uploader published every chunk and the meta before the first denial came back, " +
	"and its clean-up does not remove the meta (claimcheck/internal/objstore)"

// permCall is a Client call from user caller to a Unary responder of user
// resp, with what the row denies in users.
type permCall struct {
	users            map[string]perms
	bigReq, bigReply bool // WithClaimChecks (and ServeClaimChecks) with a request or a reply above the limit
	opts             []shim.CallOption
	deadline         time.Duration // 0: long
	want             wantErr
	slow             bool  // the error comes at the deadline (the server tells only the other side)
	ran              int64 // how often the responder ran
	left             int   // objects left in the bucket
	respErr          func(error) bool
}

func (p permCall) run(t *testing.T) {
	e := newSecEnv(t, p.users)
	rnc := e.as("")
	if _, ok := p.users[respUser]; ok {
		rnc = e.as(respUser)
	}
	reply := []byte("reply")
	if p.bigReply {
		reply = payload(bigSize, 2)
	}
	var rst *claimcheck.Store
	if p.bigReq || p.bigReply {
		rst = store(t, rnc)
	}
	r := serveReply(t, rnc, rst, reply, 0)
	cnc := e.as("")
	if _, ok := p.users[callerUser]; ok {
		cnc = e.as(callerUser)
	}
	var copts []shim.Option
	if p.bigReq || p.bigReply {
		copts = append(copts, shim.WithClaimChecks(store(t, cnc)))
	}
	body := []byte("request")
	if p.bigReq {
		body = payload(bigSize, 1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmp0(p.deadline, long))
	defer cancel()
	var m *nats.Msg
	var err error
	took := timed(func() { m, err = shim.NewClient(cnc, copts...).Request(ctx, subject, body, p.opts...) })
	t.Logf("after %v: %v", took, err)
	p.want.check(t, err)
	if err == nil && (m == nil || !bytes.Equal(m.Data, reply)) {
		t.Errorf("success without the %d-byte reply", len(reply))
	}
	if !p.slow && p.want.outcome != shim.OutcomeOK {
		quick(t, took)
	}
	if p.respErr != nil {
		r.reported(t, "the responder's OnError to report its refusal", p.respErr)
	}
	ranTimes(t, rnc, r, p.ran)
	checkLeftIn(t, e.ast, p.left)
}

// permRPCRows: the request, Attempts, RequestMany and claim-checked RPC
// paths when the server denies what they need.
func permRPCRows() []secRow {
	row := func(path sendPath, name, pending string, p permCall) secRow {
		return secRow{path: path, column: columnPerm, name: name, pending: pending, run: p.run}
	}
	denyCaller := func(pub, sub []string) map[string]perms { return map[string]perms{callerUser: denying(pub, sub)} }
	denyResp := func(pub, sub []string) map[string]perms { return map[string]perms{respUser: denying(pub, sub)} }
	idAttempts := []shim.CallOption{shim.Attempts(3), shim.OperationID("op-1")}
	return []secRow{
		row(pRequest, "the server denies the request's publish: not run, at once", "",
			permCall{users: denyCaller([]string{subject}, nil), want: deniedAt(shim.OutcomeNotRun)}),
		row(pRequest, "the server refuses the reply subscription: at once", "",
			permCall{users: denyCaller(nil, []string{"_INBOX.>"}), want: deniedAt(shim.OutcomeUnknown), ran: 1}),
		row(pRequest, "the responder may not publish its reply: the caller waits for its deadline, the responder's OnError hears it", "",
			permCall{users: denyResp([]string{"_INBOX.>"}, nil), deadline: short, slow: true, want: unknownTimeout, ran: 1, respErr: permissionDenied}),
		{path: pRequest, column: columnPerm, name: "a subscription refused elsewhere on the connection fails no call",
			run: refusedElsewhere},
		{path: pRequest, column: columnPerm, name: "the reply subscription granted by a configuration reload: the next call succeeds",
			run: grantedByReload},
		{path: pRequest, column: columnPerm, name: "a denied subject the server quotes with escapes: not run, at once",
			run: deniedQuotedSubjects},

		row(pAttempts, "the server denies the request's publish: not run, not sent again, at once", "",
			permCall{users: denyCaller([]string{subject}, nil), opts: idAttempts, want: deniedAt(shim.OutcomeNotRun)}),
		row(pAttempts, "the server refuses the reply subscription: at once, not sent again", "",
			permCall{users: denyCaller(nil, []string{"_INBOX.>"}), opts: idAttempts, want: deniedAt(shim.OutcomeUnknown), ran: 1}),

		{path: pMany, column: columnPerm, name: "the server denies the request's publish: one error, not run, at once", run: manyDenied(true)},
		{path: pMany, column: columnPerm, name: "the server refuses the reply subscription: one error, at once", run: manyDenied(false)},

		{path: pCCRequest, column: columnPerm, name: "the caller may not upload chunks: not run, at once, nothing stored", bug: metaLeft,
			run: permCall{users: denyCaller([]string{chunks}, nil), bigReq: true, want: deniedAt(shim.OutcomeNotRun)}.run},
		row(pCCRequest, "the caller may not purge the bucket: not run before anything is stored", "",
			permCall{users: denyCaller(purge, nil), bigReq: true, want: deniedAt(shim.OutcomeNotRun)}),
		row(pCCRequest, "the responder may not read the request: rejected at once, the handler does not run, nothing stored", "",
			permCall{users: denyResp(directGets, nil), bigReq: true,
				want: wantErr{outcome: shim.OutcomeRejected, code: shim.CodeClaimCheckUnresolved, sent: yes}}),
		{path: pCCReply, column: columnPerm, name: "the responder may not upload its reply: an error reply at once (INTERNAL), nothing stored", bug: metaLeft,
			run: permCall{users: denyResp([]string{chunks}, nil), bigReply: true, ran: 1,
				want: wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeInternal, sent: yes}}.run},
		row(pCCReply, "the caller may not read the reply: REPLY_LOST at once", "",
			permCall{users: denyCaller(directGets, nil), bigReply: true, ran: 1, left: 1,
				want: wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeReplyLost, is: []error{shim.ErrReplyLost, nats.ErrPermissionViolation}, sent: yes}}),
	}
}

// refusedElsewhere: the caller's user may subscribe to every inbox but
// one subtree; a subscription there is refused while 8 calls (a Client
// with and one without claim checks) wait for their replies: the replies
// answer them, and later calls, which need none of the subtree, succeed.
func refusedElsewhere(t *testing.T) {
	e := newSecEnv(t, map[string]perms{callerUser: denying(nil, []string{"_INBOX.private.>"})})
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	rnc := e.as("")
	if _, err := shim.Serve(rnc, subject, shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) {
		<-release
		return []byte("reply"), nil
	})); err != nil {
		t.Fatal(err)
	}
	_ = rnc.Flush()
	cnc := e.as(callerUser)
	clients := []*shim.Client{shim.NewClient(cnc), shim.NewClient(cnc, shim.WithClaimChecks(store(t, cnc)))}
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			_, err := clients[i%2].Request(ctx, subject, []byte("in flight"))
			errs <- err
		}()
	}
	if _, err := cnc.Subscribe("_INBOX.private.x", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	natstest.Eventually(t, settle, func() bool { return errors.Is(cnc.LastError(), nats.ErrPermissionViolation) }, "the refusal")
	once.Do(func() { close(release) })
	for i := range 8 {
		if err := <-errs; err != nil {
			t.Errorf("in-flight call %d, answered after a refusal it does not need: %v", i, err)
		}
	}
	for i := range 4 {
		if _, err := clients[i%2].Request(ctx, subject, []byte("after")); err != nil {
			t.Errorf("call %d after a refusal it does not need: %v", i, err)
		}
	}
}

// grantedByReload: the caller's inbox subscription is refused, then a
// configuration reload grants it: the next call succeeds.
func grantedByReload(t *testing.T) {
	denied := denying(nil, []string{"_INBOX.>"})
	e := newSecEnv(t, map[string]perms{callerUser: denied})
	serveReply(t, e.as(""), nil, []byte("reply"), 0)
	c := shim.NewClient(e.as(callerUser))
	_, err := c.Request(context.Background(), subject, []byte("refused"))
	deniedAt(shim.OutcomeUnknown).check(t, err)
	e.reload(callerUser, denied, perms{pubAllow: all, subAllow: all})
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	took := timed(func() { _, err = c.Request(ctx, subject, []byte("granted")) })
	if err != nil {
		t.Errorf("the call after the grant: %v (after %v)", err, took)
	}
}

// deniedQuotedSubjects: requests to subjects the server writes escaped
// (%q: a backslash, DEL, a non-printable format character) in its
// permission error end PERMISSION_DENIED at once.
func deniedQuotedSubjects(t *testing.T) {
	e := newSecEnv(t, map[string]perms{callerUser: {pubAllow: []string{"svc.ok"}, subAllow: all}})
	c := shim.NewClient(e.as(callerUser))
	for _, subj := range []string{`svc.back\slash`, "svc.del\x7f", "svc.zw\u200b"} {
		ctx, cancel := context.WithTimeout(context.Background(), long)
		var err error
		took := timed(func() { _, err = c.Request(ctx, subj, []byte("x")) })
		cancel()
		t.Logf("%q: after %v: %v", subj, took, err)
		deniedAt(shim.OutcomeNotRun).check(t, err)
		quick(t, took)
	}
}

// manyDenied returns a RequestMany row whose request publish (pub) or
// reply subscription (!pub) the server denies.
func manyDenied(pub bool) func(t *testing.T) {
	return func(t *testing.T) {
		p := denying(nil, []string{"_INBOX.>"})
		want := deniedAt(shim.OutcomeUnknown)
		if pub {
			p, want = denying([]string{subject}, nil), deniedAt(shim.OutcomeNotRun)
		}
		e := newSecEnv(t, map[string]perms{callerUser: p})
		serveReply(t, e.as(""), nil, []byte("r"), 0)
		c := shim.NewClient(e.as(callerUser))
		ctx, cancel := context.WithTimeout(context.Background(), long)
		defer cancel()
		var errs []error
		took := timed(func() {
			for m, err := range c.RequestMany(ctx, subject, []byte("x"), shim.MaxReplies(1)) {
				if m != nil {
					t.Errorf("a reply %q", m.Data)
				}
				errs = append(errs, err)
			}
		})
		if len(errs) != 1 {
			t.Fatalf("%d errors, want one: %v", len(errs), errs)
		}
		want.check(t, errs[0])
		quick(t, took)
	}
}
