package telemetry

import (
	"testing"

	"github.com/nats-io/nats.go"
)

func TestInboxTemplate(t *testing.T) {
	nuid := "ABCDEFGHIJKLMNOPQRSTUV" // 22 base-62 digits
	for _, tc := range []struct {
		subject, prefix, want string
	}{
		{"_INBOX." + nuid + ".1", "", "_INBOX.>"},
		{"_INBOX." + nuid, "", "_INBOX.>"},
		{"_INBOX.x", "", "_INBOX.>"},
		{"svc.in." + nuid + ".abcdefgh", "svc.in", "svc.in.>"},
		{"svc.in.anything", "svc.in", "svc.in.>"},
		{"svc.in." + nuid + ".7", "", "svc.in.>"}, // a prefix not known: the shape
		{"svc.in." + nuid, "", "svc.in.>"},
		{"orders.new", "", ""},
		{"orders.new", "svc.in", ""},
		{"_INBOX", "", ""},
		{"_INBOXES.a", "", ""},
		{"svc.inx.a", "svc.in", ""},
		{nuid, "", ""},                     // no prefix
		{"a." + nuid[:21] + ".1", "", ""},  // 21 digits
		{"a." + nuid[:21] + "-.1", "", ""}, // not base 62
		{"a." + nuid + ".b.c", "", "a.>"},  // natssend's <inbox>.<call>.<attempt>
		{"a.b." + nuid + ".c.d.e", "", "a.b.>"},
		{"a." + nuid + "x.b", "", ""}, // 23 digits
		{"x." + nuid + "." + nuid, "", "x.>"},
	} {
		got, ok := inboxTemplate(tc.subject, tc.prefix)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("inboxTemplate(%q, %q) = %q, %v; want %q", tc.subject, tc.prefix, got, ok, tc.want)
		}
	}
	// Real inboxes, as nats.go makes them.
	for range 100 {
		in := nats.NewInbox()
		if got, ok := inboxTemplate(in, ""); !ok || got != "_INBOX.>" {
			t.Fatalf("%s: %q, %v", in, got, ok)
		}
		if got, ok := inboxTemplate("my.box"+in[len("_INBOX"):]+".42", ""); !ok || got != "my.box.>" {
			t.Fatalf("%s under my.box: %q, %v", in, got, ok)
		}
	}
}

// TestDestOfNamingFunction: the naming function names lasting subjects
// only; an inbox is never passed to it.
func TestDestOfNamingFunction(t *testing.T) {
	called := 0
	tel := Tel{subject: func(s string) string { called++; return "orders.*" }}
	if d := tel.destOf("orders.1"); d.name != "orders.*" || d.template != "" || d.label() != "orders.*" {
		t.Fatalf("orders.1: %+v", d)
	}
	if d := tel.destOf(nats.NewInbox() + ".3"); d.name != "" || d.template != "_INBOX.>" || d.label() != "_INBOX.>" {
		t.Fatalf("inbox: %+v", d)
	}
	if called != 1 {
		t.Fatalf("naming function called %d times, want 1", called)
	}
}
