package connlimit

import (
	"errors"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// The server's texts of a permission violation (nats-server
// server/client.go pubPermissionViolation, subPermissionViolation,
// replySubjectViolation, and the configuration reload's removal of a
// subscription), each followed by the subject written with Go's %q. nats.go
// passes the text on unchanged apart from the surrounding quotes (its
// processErr matches the prefix without regard to case).
var deniedPrefixes = [...]struct{ prefix, op string }{
	{"permissions violation for publish with reply of ", "reply"},
	{"permissions violation for publish to ", "publish"},
	{"permissions violation for subscription to ", "subscribe"},
}

// queueInfix introduces a refused queue subscription's group, also
// written with %q.
const queueInfix = " using queue "

// ParseDenial returns the Denial that err, an error nats.go passed to the
// asynchronous error callback, reports, or nil when it reports none. The
// subject (and a queue group) is read as the Go quoted string the server
// wrote (strconv.QuotedPrefix, strconv.Unquote), so a subject holding a
// byte the server escapes (a quote, a backslash, DEL, a non-printable or
// non-UTF-8 byte) is the subject that was sent, byte for byte.
func ParseDenial(err error) *Denial {
	if err == nil || !errors.Is(err, nats.ErrPermissionViolation) {
		return nil
	}
	text := err.Error()
	for _, p := range deniedPrefixes {
		i := indexFold(text, p.prefix)
		if i < 0 {
			continue
		}
		subject, rest, ok := unquotePrefix(text[i+len(p.prefix):])
		if !ok {
			return nil
		}
		d := &Denial{Op: p.op, Subject: subject, Err: err}
		if p.op == "subscribe" && len(rest) >= len(queueInfix) && strings.EqualFold(rest[:len(queueInfix)], queueInfix) {
			if q, _, ok := unquotePrefix(rest[len(queueInfix):]); ok {
				d.Queue = q
			}
		}
		return d
	}
	return nil
}

// indexFold is the index of the first instance of prefix, ASCII, in s
// regardless of case, or -1. s is not lower-cased as a whole: a subject's
// non-ASCII letters may change their length when they are.
func indexFold(s, prefix string) int {
	for i := 0; i+len(prefix) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(prefix)], prefix) {
			return i
		}
	}
	return -1
}

// unquotePrefix reads the Go quoted string s begins with, and returns it
// unquoted and what follows it.
func unquotePrefix(s string) (string, string, bool) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", false
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return "", "", false
	}
	return v, s[len(q):], true
}
