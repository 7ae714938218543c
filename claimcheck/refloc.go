package claimcheck

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/objstore"
)

// location reads where a reference says its payload is: HeaderBucket
// (the Store's own bucket when absent) and HeaderDomain (the Store's own
// domain when absent or equal to it). A domain that is neither the
// Store's nor one WithDomains names is refused with ErrForeignDomain,
// before anything is read; a malformed header is ErrCorrupt.
func (s *Store) location(subject, name string, h nats.Header) (bucket, domain string, err error) {
	bucket = s.cfg.bucket
	if v, ok := h[HeaderBucket]; ok {
		if len(v) != 1 || !validBucket(v[0]) {
			return "", "", &ResolveError{Object: name, Subject: subject, Err: ErrCorrupt,
				Detail: fmt.Sprintf("%s header %q is not one bucket name", HeaderBucket, strings.Join(v, ","))}
		}
		bucket = v[0]
	}
	if v, ok := h[HeaderDomain]; ok {
		if len(v) != 1 || !validDomain(v[0]) {
			return "", "", &ResolveError{Object: name, Subject: subject, Err: ErrCorrupt,
				Detail: fmt.Sprintf("%s header %q is not one JetStream domain", HeaderDomain, strings.Join(v, ","))}
		}
		domain = v[0]
	}
	switch {
	case domain == s.domain:
		domain = ""
	case domain != "" && !s.cfg.domains[domain]:
		return "", "", &ResolveError{Object: name, Subject: subject, Err: ErrForeignDomain,
			Detail: fmt.Sprintf("stored in JetStream domain %q, which this Store may not read (see WithDomains)", domain)}
	}
	return bucket, domain, nil
}

// validBucket reports whether b is a bucket name the object store accepts.
func validBucket(b string) bool {
	if b == "" || len(b) > 255 {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// validDomain reports whether d is one subject token, as a domain is.
func validDomain(d string) bool {
	return d != "" && !strings.ContainsAny(d, ". \t\r\n*>")
}

// reader returns the direct-get reader of ref's bucket, through its
// domain's JetStream API when that is not the Store's own.
func (s *Store) reader(ref *refInfo) *objstore.Reader {
	if ref.bucket == s.cfg.bucket && ref.domain == "" {
		return s.rd
	}
	prefix := objstore.APIPrefix(s.js)
	if ref.domain != "" {
		prefix = "$JS." + ref.domain + ".API."
	}
	return s.rd.Sibling(prefix, streamName(ref.bucket))
}
