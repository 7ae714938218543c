package faultmatrix_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// The hostile-peer and permission columns. A row has a world of its own:
// a server whose users have the row's permissions (nats-server's allow
// and deny lists, written as an operator writes them), the natssend side
// under test on those users' connections, and an admin connection (every
// permission) that inspects the bucket. A hostile peer is an ordinary
// user of the same account: it speaks NATS with nats.go, by hand.
//
// A row whose expectation is what an issue-42 fix in flight will give is
// skipped with "pending issue 42: <the fix>" until that fix is merged;
// NATSSEND_MATRIX_PENDING=1 runs them. A row that fails for a bug outside
// those fixes is skipped with "BUG: ..." (NATSSEND_MATRIX_BUGS=1 runs it).

// secRow is a row of the hostile-peer or the permission column.
type secRow struct {
	path    sendPath
	column  string
	name    string
	pending string // the issue-42 fix this row waits for; "" when it holds today
	bug     string // a product bug outside issue 42's fixes makes the row fail: skipped with it (NATSSEND_MATRIX_BUGS=1 runs it)
	heap    bool   // the row measures the heap: it runs alone, in TestHostilePeerHeap
	run     func(t *testing.T)
}

func (r secRow) subtest() (string, func(*testing.T)) {
	return string(r.path) + ": " + r.name, func(t *testing.T) {
		if r.pending != "" && os.Getenv("NATSSEND_MATRIX_PENDING") == "" {
			t.Skip("pending issue 42: " + r.pending)
		}
		if r.bug != "" && os.Getenv("NATSSEND_MATRIX_BUGS") == "" {
			t.Skip("BUG: " + r.bug)
		}
		r.run(t)
	}
}

// secRows are every row of the two columns.
func secRows() []secRow {
	return slices.Concat(permRPCRows(), permStreamRows(), permStoreRows(), hostileRPCRows(), hostileStreamRows(), hostileStoreRows())
}

func columnRows(col string, heap bool) []secRow {
	var rows []secRow
	for _, r := range secRows() {
		if r.column == col && r.heap == heap {
			rows = append(rows, r)
		}
	}
	return rows
}

// TestPermissionColumn: every send path when the server denies what it
// needs: a typed error at once (not at the deadline), the outcome the
// documentation promises, and nothing left in the bucket.
func TestPermissionColumn(t *testing.T) {
	t.Parallel()
	runRows(t, columnRows(columnPerm, false))
}

// TestHostilePeerColumn: every send path against a peer with ordinary
// credentials in the same account that forges or repeats replies,
// references, frames and headers, or plants objects.
func TestHostilePeerColumn(t *testing.T) {
	t.Parallel()
	runRows(t, columnRows(columnHostile, false))
}

// TestHostilePeerHeap: the hostile-peer rows that measure the heap, one
// at a time. Not parallel: the heap they measure is theirs.
func TestHostilePeerHeap(t *testing.T) {
	runRowsAtOnce(t, 1, columnRows(columnHostile, true))
}

// perms is a user's permissions as server configuration text.
type perms struct {
	pubAllow, pubDeny, subAllow, subDeny []string
	responses                            string // allow_responses' value; "" for none
}

// all is every subject.
var all = []string{">"}

// text is p as the body of a permissions block.
func (p perms) text() string {
	var parts []string
	block := func(kind string, allow, deny []string) {
		var b []string
		if allow != nil {
			b = append(b, "allow: "+quoted(allow))
		}
		if deny != nil {
			b = append(b, "deny: "+quoted(deny))
		}
		if b != nil {
			parts = append(parts, kind+": { "+strings.Join(b, ", ")+" }")
		}
	}
	block("publish", p.pubAllow, p.pubDeny)
	block("subscribe", p.subAllow, p.subDeny)
	if p.responses != "" {
		parts = append(parts, "allow_responses: "+p.responses)
	}
	return strings.Join(parts, ", ")
}

func quoted(subjects []string) string {
	q := make([]string, len(subjects))
	for i, s := range subjects {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// denying is every permission but the publishes pub and subscriptions sub.
func denying(pub, sub []string) perms {
	return perms{pubAllow: all, pubDeny: pub, subAllow: all, subDeny: sub}
}

// secEnv is a row's world.
type secEnv struct {
	t     *testing.T
	s     *natstest.Server
	admin *nats.Conn
	ast   *claimcheck.Store
}

// newSecEnv starts a server (JetStream, max_payload limit) with users
// named by users, each with its permissions, and makes the bucket.
func newSecEnv(t *testing.T, users map[string]perms) *secEnv {
	t.Helper()
	opts := []natstest.Option{natstest.MaxPayload(limit), natstest.JetStream()}
	for _, name := range slices.Sorted(maps.Keys(users)) {
		opts = append(opts, natstest.WithUserConfig(name, "p", userEntry(name, users[name])))
	}
	e := &secEnv{t: t, s: natstest.Start(t, opts...)}
	e.admin = dial(t, e.s.URL())
	e.ast = store(t, e.admin)
	return e
}

// userEntry is a user entry of the server's configuration.
func userEntry(name string, p perms) string {
	return fmt.Sprintf("{ user: %q, password: \"p\", permissions: { %s } }", name, p.text())
}

// as connects as user ("" for the admin's account user) with shim.Connect.
func (e *secEnv) as(user string) *nats.Conn {
	if user == "" {
		return dial(e.t, e.s.URL())
	}
	return dial(e.t, e.s.UserURL(user))
}

// rawAs connects as user with plain nats.go: a peer that does not use
// natssend, whose permission reports go nowhere.
func (e *secEnv) rawAs(user string) *nats.Conn {
	e.t.Helper()
	nc, err := nats.Connect(e.s.UserURL(user), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})) //natssend:reviewed a hostile peer that does not use natssend, by design
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(nc.Close)
	return nc
}

// reload rewrites user's permissions in the server's configuration and
// reloads it (a configuration reload, as an operator's).
func (e *secEnv) reload(user string, from, to perms) {
	e.t.Helper()
	// natstest writes the configuration into a temporary directory of the
	// row's test: a sibling of the one TempDir makes now.
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(e.t.TempDir()), "*", "server.conf"))
	if len(files) != 1 {
		e.t.Fatalf("the server's configuration file: found %q", files)
	}
	file := files[0]
	b, err := os.ReadFile(file)
	if err != nil {
		e.t.Fatal(err)
	}
	old, repl := userEntry(user, from), userEntry(user, to)
	if !strings.Contains(string(b), old) {
		e.t.Fatalf("the configuration has no entry %s", old)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), old, repl, 1)), 0o600); err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.Server().Reload(); err != nil {
		e.t.Fatal(err)
	}
}

// responder serves subject on nc with a Unary handler that answers reply
// (with ServeClaimChecks(st) when st is not nil), counting its runs and
// collecting what OnError reports.
type responder struct {
	runs atomic.Int64
	mu   sync.Mutex
	errs []error
}

func serveReply(t *testing.T, nc *nats.Conn, st *claimcheck.Store, reply []byte, work time.Duration) *responder {
	t.Helper()
	r := &responder{}
	opts := []shim.HandlerOption{shim.OnError(func(_ *nats.Msg, err error) {
		r.mu.Lock()
		r.errs = append(r.errs, err)
		r.mu.Unlock()
	})}
	if st != nil {
		opts = append(opts, shim.ServeClaimChecks(st))
	}
	if _, err := shim.Serve(nc, subject, shim.Unary(func(context.Context, *nats.Msg) ([]byte, error) {
		r.runs.Add(1)
		time.Sleep(work)
		return reply, nil
	}, opts...)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return r
}

// reported waits for OnError to report an error that check accepts.
func (r *responder) reported(t *testing.T, what string, check func(error) bool) {
	t.Helper()
	natstest.Eventually(t, settle, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return slices.ContainsFunc(r.errs, check)
	}, what)
}

// permissionDenied reports whether err is PERMISSION_DENIED matching
// nats.ErrPermissionViolation.
func permissionDenied(err error) bool {
	d := shim.Describe(err)
	return d != nil && d.Code == shim.CodePermissionDenied && errors.Is(err, nats.ErrPermissionViolation)
}

// deniedAt is the expectation of a call the server's denial ends.
func deniedAt(o shim.Outcome) wantErr {
	return wantErr{outcome: o, code: shim.CodePermissionDenied, is: []error{nats.ErrPermissionViolation}}
}

// timed runs f and returns how long it took.
func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// quick fails the row when an error that must come at once took longer.
func quick(t *testing.T, took time.Duration) {
	t.Helper()
	if took > atOnce {
		t.Errorf("the error came after %v; it must come at once (within %v, the call's deadline is %v)", took, atOnce, long)
	}
}

// ranTimes checks how often a responder ran, once the requests have
// reached it.
func ranTimes(t *testing.T, nc *nats.Conn, r *responder, want int64) {
	t.Helper()
	if want > 0 {
		// A call that ended at a refusal may return before its request,
		// sent already, reaches the responder.
		natstest.Eventually(t, 10*time.Second, func() bool { return r.runs.Load() >= want }, "the responder to run")
	}
	_ = nc.FlushTimeout(5 * time.Second)
	if n := r.runs.Load(); n != want {
		t.Errorf("the responder ran %d times, want %d", n, want)
	}
}

// storedEvent stores a payload for ev.data as the admin and returns its
// reference: another user's payload, for a peer to aim at.
func storedEvent(t *testing.T, e *secEnv) (*nats.Msg, []byte) {
	t.Helper()
	return preparedIn(t, e.ast, 9)
}

// intact checks that ref's payload still reads back as data.
func intact(t *testing.T, st *claimcheck.Store, ref *nats.Msg, data []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	got, err := st.Resolve(ctx, ref)
	if err != nil || string(got) != string(data) {
		t.Errorf("the other user's payload: %d bytes, %v; want it intact", len(got), err)
	}
}
