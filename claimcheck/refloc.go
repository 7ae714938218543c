package claimcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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

// servedHere reports whether the stream of the read's bucket is served by
// the server this connection is on or by its cluster, whose routes carry
// messages of any size (a server checks max_payload on what clients and
// leafnodes publish to it, not on deliveries, and routes set no limit).
// The stream's placement says so: its cluster is the connection's, or,
// for a server without a cluster, its leader is the connection's server
// (a leafnode's servers cannot share their hub's cluster name). When the
// placement cannot be had (the user may not ask for the stream's info)
// it is false, with why.
func (r *objReader) servedHere() (bool, string) {
	var ci *jetstream.ClusterInfo
	if si := r.s.stream.CachedInfo(); r.rd == r.s.rd && si != nil && si.Cluster != nil {
		ci = si.Cluster
	} else {
		err := r.s.readCall(r.ctx, func(ctx context.Context) (err error) {
			ci, err = r.streamPlace(ctx) //natssend:reviewed retry: a read, no effect to repeat
			return err
		})
		if err != nil {
			return false, fmt.Sprintf("its placement could not be read: %v", err)
		}
	}
	nc := r.s.nc
	switch {
	case ci == nil:
		return false, "the server did not say where it is placed"
	case ci.Name != "" && ci.Name == nc.ConnectedClusterName():
		return true, ""
	case ci.Name == "" && ci.Leader != "" && ci.Leader == nc.ConnectedServerName():
		return true, ""
	}
	return false, fmt.Sprintf("it is placed in cluster %q, led by %q; this connection is on server %q of cluster %q",
		ci.Name, ci.Leader, nc.ConnectedServerName(), nc.ConnectedClusterName())
}

// streamPlace asks the JetStream API of the read's bucket and domain
// where the bucket's stream is placed.
func (r *objReader) streamPlace(ctx context.Context) (*jetstream.ClusterInfo, error) {
	prefix := objstore.APIPrefix(r.s.js)
	if r.ref.domain != "" {
		prefix = "$JS." + r.ref.domain + ".API."
	}
	resp, err := r.s.nc.RequestWithContext(ctx, prefix+"STREAM.INFO."+streamName(r.ref.bucket), nil) //natssend:reviewed a read: no effect to replay; a few bytes
	if err != nil {
		return nil, err
	}
	var ans struct {
		Cluster *jetstream.ClusterInfo `json:"cluster"`
		Error   *jetstream.APIError    `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &ans); err != nil {
		return nil, fmt.Errorf("malformed stream info: %w", err)
	}
	if ans.Error != nil {
		return nil, ans.Error
	}
	return ans.Cluster, nil
}
