package shim_test

import (
	"context"
	"testing"
	"time"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestRequestDeniedQuotedSubject: a request to a subject the caller may
// not publish to, holding a byte the server escapes when it quotes the
// subject (%q: a quote, a backslash, DEL, a format character, a byte that
// is not UTF-8), ends PERMISSION_DENIED, not run, at the server's report,
// not at its deadline (the report names the subject escaped).
func TestRequestDeniedQuotedSubject(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t,
		natstest.WithUser(natstest.User{Name: "caller", Password: "p", Publish: []string{"svc.ok"}, Subscribe: []string{"_INBOX.>"}}))
	c := shim.NewClient(connect(t, s.UserURL("caller")), shim.WithTimeout(10*time.Second))
	for _, subj := range []string{`svc.a"b`, `svc.a\b`, "svc.a\x7fb", "svc.a\u200bb", "svc.a\xffb", "svc.a\x01b"} {
		t0 := time.Now()
		_, err := c.Request(context.Background(), subj, []byte("x"))
		deniedWithin(t, err, time.Since(t0), "svc.a", shim.OutcomeNotRun)
	}
}
