package wire

import (
	"net/textproto"
	"strings"
)

const (
	// HeaderLine is the status line that opens every header block.
	HeaderLine = "NATS/1.0\r\n"
	// headerEmptySize is the size of a header block with no header lines:
	// the status line and the terminating CRLF.
	headerEmptySize = len(HeaderLine) + 2
	// lineOverhead is the ": " separator plus the CRLF of one header line.
	lineOverhead = 4
)

// HeaderSize returns the number of bytes the header block of h occupies on
// the wire, which is what the server adds to the body when it checks
// max_payload. It returns 0 for a nil or empty map (nats.go then sends PUB,
// not HPUB). A key present with no values still makes the block non-empty.
func HeaderSize(h map[string][]string) int {
	if len(h) == 0 {
		return 0
	}
	n := headerEmptySize
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + trimmedLen(v) + lineOverhead
		}
	}
	return n
}

// trimmedLen is len(textproto.TrimString(v)), with a fast path for the
// common value that has nothing to trim.
func trimmedLen(v string) int {
	if len(v) == 0 || (!isASCIISpace(v[0]) && !isASCIISpace(v[len(v)-1])) {
		return len(v)
	}
	return len(textproto.TrimString(v))
}

// isASCIISpace matches net/textproto's definition.
func isASCIISpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r'
}

// LineSize returns the bytes that one "key: value" header line adds to a
// header block that already exists.
func LineSize(key, value string) int {
	return len(key) + trimmedLen(value) + lineOverhead
}

// EmptyBlockSize is the size of a header block with no lines. Adding the
// first header to a message that had none costs EmptyBlockSize plus the
// line's LineSize.
const EmptyBlockSize = headerEmptySize

// MsgSize returns HeaderSize(h) + bodyLen: exactly the total the server
// compares with max_payload.
func MsgSize(h map[string][]string, bodyLen int) int {
	return HeaderSize(h) + bodyLen
}

// forbiddenKeyChars are the printable ASCII characters nats.go refuses in a
// header key (nats.go's makeValidHeaderKeyAsciiSet).
const forbiddenKeyChars = "\"()/,:;<=>?@[\\]{}"

// ValidHeaderKey reports whether k is a header key that nats.go will send:
// non-empty, printable ASCII (33..126) without any of "()/,:;<=>?@[\]{}
// and the double quote. nats.go refuses to publish a message whose header
// has any other key (nats.ErrBadHeaderMsg).
func ValidHeaderKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !headerKeyChars[k[i]] {
			return false
		}
	}
	return true
}

// headerKeyChars marks the bytes ValidHeaderKey accepts: a table, read
// only, so that a key costs one load per byte.
var headerKeyChars = func() (t [256]bool) {
	for c := 33; c <= 126; c++ {
		t[c] = strings.IndexByte(forbiddenKeyChars, byte(c)) < 0
	}
	return t
}()

// InvalidHeaderKey returns the first key of h that ValidHeaderKey rejects,
// and whether there is one.
func InvalidHeaderKey(h map[string][]string) (string, bool) {
	if len(h) == 0 {
		return "", false
	}
	for k := range h {
		if !ValidHeaderKey(k) {
			return k, true
		}
	}
	return "", false
}

// ValidSubject reports whether s can be sent as a subject or reply
// subject: non-empty and without space, tab, CR or LF (nats.go's
// validateSubject). A subject with a space would be read by the server as
// a subject followed by a reply subject.
func ValidSubject(s string) bool {
	if s == "" {
		return false
	}
	// A table look-up per byte: strings.ContainsAny builds a set on every
	// call, which showed in the publish path's profile.
	for i := 0; i < len(s); i++ {
		if notInSubject[s[i]] {
			return false
		}
	}
	return true
}

// notInSubject marks the bytes ValidSubject refuses. Read only.
var notInSubject = [256]bool{' ': true, '\t': true, '\r': true, '\n': true}

// MaxControlLine is nats-server's default max_control_line: the longest
// protocol line it reads from a client (PUB or HPUB and its arguments:
// the subject, the reply subject and the sizes). A longer one closes the
// connection (server/parser.go overMaxControlLineLimit). The server does
// not announce its value.
const MaxControlLine = 4096

// sizeArgs is what the size arguments of a PUB or HPUB line take at most,
// spaces included: two sizes of up to 10 digits (max_payload is an int32
// on the server), each after a space.
const sizeArgs = 2 * (1 + 10)

// InboxReserve is what a sender reserves for a reply subject it makes
// itself from a connection's inbox prefix (nats.Options.InboxPrefix; ""
// is nats.go's "_INBOX"): the prefix, a NUID and a call's token and
// attempt, or nats.go's own request token, with room to spare.
func InboxReserve(prefix string) int {
	if prefix == "" {
		prefix = "_INBOX"
	}
	return len(prefix) + 64
}

// ControlLineFits reports whether a message on subject with a reply
// subject of replyLen bytes (0: none) is sure to stay within
// MaxControlLine whatever its sizes.
func ControlLineFits(subject string, replyLen int) bool {
	n := len(subject) + sizeArgs
	if replyLen > 0 {
		n += 1 + replyLen
	}
	return n <= MaxControlLine
}
