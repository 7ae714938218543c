package telemetry

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"
)

// defaultInbox is nats.go's inbox prefix (nats.InboxPrefix without its dot).
const defaultInbox = "_INBOX"

// nuidLen is the length of a nuid, the unique token of every inbox nats.go
// makes (nats.NewInbox, nats.Conn.NewInbox: "<prefix>.<nuid>").
const nuidLen = 22

// dest is the destination of one operation as telemetry names it: a
// lasting subject by its name (the subject, or what the naming option
// maps it to), a temporary one (an inbox: a reply subject, a stream's
// control subject) by a template and never by the unique subject, so that
// metrics keep a bounded number of series.
type dest struct {
	name     string // messaging.destination.name; "" when temporary
	template string // messaging.destination.template of a temporary destination
}

// label is the destination in span names: the name, or the template.
func (d dest) label() string {
	if d.template != "" {
		return d.template
	}
	return d.name
}

// attrs appends d's attributes to kv.
func (d dest) attrs(kv []attribute.KeyValue) []attribute.KeyValue {
	if d.template != "" {
		return append(kv, KeyTemplate.String(d.template), KeyTemporary.Bool(true))
	}
	return append(kv, KeyDestination.String(d.name))
}

// destOf names subject: a temporary one by its template, any other by
// t's naming function (the subject itself without one).
func (t Tel) destOf(subject string) dest {
	if tpl, ok := inboxTemplate(subject, t.inbox); ok {
		return dest{template: tpl}
	}
	if t.subject != nil {
		return dest{name: t.subject(subject)}
	}
	return dest{name: subject}
}

// inboxTemplate reports whether subject is an inbox and returns its
// template "<prefix>.>". An inbox is a subject under nats.go's default
// prefix (_INBOX), under prefix (the connection's custom inbox prefix,
// "" when none or not known), or one that has the shape of an inbox of
// any prefix: a nuid after at least one token, "<prefix>.<nuid>[.<more>]",
// as the requests and streams of a connection with nats.CustomInboxPrefix
// arrive at a responder that does not know that prefix (nats.go answers
// on "<inbox>.<token>", natssend's calls on "<inbox>.<call>.<attempt>").
// A nuid-shaped token is unique whatever the subject means, so a subject
// with one is never a name.
func inboxTemplate(subject, prefix string) (string, bool) {
	if under(subject, defaultInbox) {
		return defaultInbox + ".>", true
	}
	if prefix != "" && prefix != defaultInbox && under(subject, prefix) {
		return prefix + ".>", true
	}
	for i := strings.IndexByte(subject, '.'); i > 0; {
		tok := subject[i+1:]
		next := strings.IndexByte(tok, '.')
		if next >= 0 {
			tok = tok[:next]
		}
		if isNUID(tok) {
			return subject[:i] + ".>", true
		}
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return "", false
}

// under reports whether subject is prefix followed by at least one token.
func under(subject, prefix string) bool {
	return len(subject) > len(prefix)+1 && subject[len(prefix)] == '.' && strings.HasPrefix(subject, prefix)
}

// isNUID reports whether tok has a nuid's form: 22 base-62 digits.
func isNUID(tok string) bool {
	if len(tok) != nuidLen {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if (c < '0' || c > '9') && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}
