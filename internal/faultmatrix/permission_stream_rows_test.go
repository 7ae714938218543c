package faultmatrix_test

import (
	"bytes"
	"context"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// permStream is a stream from user caller to a StreamHandler of user
// resp ("" for the admin's user), with what the row denies in users.
type permStream struct {
	users    map[string]perms
	caller   string
	resp     string
	deadline time.Duration // the stream's Timeout (the wait for its first frame); 0: long
	open     *wantErr      // RequestStream's error; nil: it opens
	read     wantErr       // OutcomeOK: the whole body and io.EOF
	orRead   *wantErr      // another read error the row accepts (by its code), depending on timing
	slow     bool          // the error comes at the deadline
	respErr  func(error) bool
}

func (p permStream) run(t *testing.T) {
	e := newSecEnv(t, p.users)
	body := payload(streamBody, 3)
	var mu sync.Mutex
	var reported []error
	rnc := e.as(p.resp)
	if _, err := shim.Serve(rnc, subject, shim.Stream(func(_ context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		for off := 0; off < len(body); off += piece {
			if _, err := w.Write(body[off : off+piece]); err != nil {
				return err
			}
		}
		return nil
	}, shim.OnError(func(_ *nats.Msg, err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() }))); err != nil {
		t.Fatal(err)
	}
	if err := rnc.Flush(); err != nil {
		t.Fatal(err)
	}
	c := shim.NewClient(e.as(p.caller))
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	// A window below the body: the stream needs the caller's credit.
	opts := []shim.StreamOption{shim.StreamIdle(streamIdle), shim.StreamWindow(smallWindow)}
	if p.deadline > 0 {
		opts = append(opts, shim.Timeout(p.deadline))
	}
	var rs *shim.ReplyStream
	var err error
	took := timed(func() { rs, err = c.RequestStream(ctx, subject, []byte("export"), opts...) })
	switch {
	case p.open != nil:
		t.Logf("open after %v: %v", took, err)
		p.open.check(t, err)
		if rs != nil {
			_ = rs.Close()
		}
	case err != nil:
		t.Fatalf("RequestStream: %v", err)
	default:
		defer rs.Close()
		var got []byte
		took = timed(func() { got, err = io.ReadAll(rs) })
		t.Logf("read %d bytes in %v: %v", len(got), took, err)
		if p.read.outcome == shim.OutcomeOK && !bytes.Equal(got, body) {
			t.Errorf("read %d bytes of %d", len(got), len(body))
		}
		want := p.read
		if d := shim.Describe(err); p.orRead != nil && d != nil && d.Code == p.orRead.code {
			want = *p.orRead
		}
		want.check(t, err)
	}
	if !p.slow && (p.open != nil || p.read.outcome != shim.OutcomeOK) {
		quick(t, took)
	}
	if p.respErr != nil {
		natstest.Eventually(t, settle, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return slices.ContainsFunc(reported, p.respErr)
		}, "the responder's OnError to report its refusal")
	}
}

// permStreamRows: both sides of a transfer stream when the server denies
// what they need, and the least-privilege sets that must suffice.
func permStreamRows() []secRow {
	row := func(path sendPath, name, pending string, p permStream) secRow {
		return secRow{path: path, column: columnPerm, name: name, pending: pending, run: p.run}
	}
	caller := func(p perms) map[string]perms { return map[string]perms{callerUser: p} }
	resp := func(p perms) map[string]perms { return map[string]perms{respUser: p} }
	streamRead := wantErr{outcome: shim.OutcomeUnknown, code: shim.CodePermissionDenied, is: []error{nats.ErrPermissionViolation, io.ErrUnexpectedEOF}, sent: yes}
	return []secRow{
		row(pStreamCall, "the server denies the request's publish: not run, at once", "",
			permStream{users: caller(denying([]string{subject}, nil)), caller: callerUser, open: &wantErr{outcome: shim.OutcomeNotRun, code: shim.CodePermissionDenied}}),
		row(pStreamCall, "the server refuses the reply subscription: at once", "",
			permStream{users: caller(denying(nil, []string{"_INBOX.>"})), caller: callerUser, open: &wantErr{outcome: shim.OutcomeUnknown, code: shim.CodePermissionDenied}}),
		// Holds on main already: the caller's credit goes to the reply
		// subject of the frames it received, which allow_responses grants.
		row(pStreamCall, "the caller may publish only to the service and its responses (allow_responses, no _INBOX.>): the whole stream", "",
			permStream{users: caller(perms{pubAllow: []string{subject}, subAllow: []string{"_INBOX.>"}, responses: "{ max: -1, expires: \"1m\" }"}),
				caller: callerUser, read: ok}),
		row(pStreamCall, "the caller may not answer the responder's frames (no _INBOX.> publish, no allow_responses): PERMISSION_DENIED at once", "",
			permStream{users: caller(perms{pubAllow: []string{subject}, subAllow: []string{"_INBOX.>"}}), caller: callerUser, read: streamRead}),
		row(pStreamResp, "the documented stream responder (publishes only responses): the whole stream", "",
			permStream{users: resp(perms{pubDeny: all, subAllow: []string{subject, "_INBOX.>"}, responses: "{ max: -1, expires: \"1h\" }"}),
				resp: respUser, read: ok}),
		row(pStreamResp, "the responder may not publish frames: the caller's first-frame wait ends at its Timeout, OnError hears it", "",
			permStream{users: resp(denying([]string{"_INBOX.>"}, nil)), resp: respUser, deadline: short, slow: true,
				open: &firstDeadline, respErr: permissionDenied}),
		// The responder hears of it at once. Whether the caller does
		// depends on timing: when the refusal ends a Write, the handler's
		// error goes out as an error frame (INTERNAL, "the caller of the
		// stream is gone"); else the caller's read ends at its idle bound.
		row(pStreamResp, "the responder may not subscribe to its control inbox: OnError hears it at once, the caller's read ends by its idle bound", "",
			permStream{users: resp(perms{pubDeny: all, subAllow: []string{subject}, responses: "{ max: -1, expires: \"1h\" }"}), resp: respUser, slow: true,
				read: streamIdleErr, orRead: &wantErr{outcome: shim.OutcomeUnknown, code: shim.CodeInternal, sent: yes}, respErr: permissionDenied}),
	}
}
