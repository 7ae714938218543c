package natstest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Domain sets the server's JetStream domain (with JetStream).
func Domain(name string) Option { return func(c *config) { c.domain = name } }

// leafListen makes the server accept leafnode connections on port (see
// StartHubLeaf).
func leafListen(port int) Option { return func(c *config) { c.leafListen = port } }

// LeafDeny keeps subjects (wildcards allowed) off a leaf's link to its hub
// in both directions: the remote's deny_imports and deny_exports (the
// docs' recipe that keeps object-store writes, $O.>, in their domain).
// It acts on the leaf of StartHubLeaf.
func LeafDeny(subjects ...string) Option {
	return func(c *config) { c.leafDeny = append(c.leafDeny, subjects...) }
}

// leafRemote makes the server a leafnode of the hub at url, binding its
// DefaultAccount to the hub's.
func leafRemote(url string) Option { return func(c *config) { c.leafRemote = url } }

func (s *Server) leafConfigText(b *strings.Builder) {
	switch {
	case s.conf.leafListen > 0:
		fmt.Fprintf(b, "leafnodes: { listen: %q }\n", fmt.Sprintf("%s:%d", s.host, s.conf.leafListen))
	case s.conf.leafRemote != "":
		deny := ""
		if len(s.conf.leafDeny) > 0 {
			l := subjectList(s.conf.leafDeny)
			deny = ", deny_imports: " + l + ", deny_exports: " + l
		}
		fmt.Fprintf(b, "leafnodes: { reconnect: \"100ms\", remotes: [ { url: %q, account: %q%s } ] }\n", s.conf.leafRemote, DefaultAccount, deny)
	}
}

// HubLeaf is a hub server and a leafnode server connected to it, their
// DefaultAccounts joined over the leafnode link. Each has its own options
// (a JetStream Domain, a MaxPayload of its own).
type HubLeaf struct {
	Hub, Leaf *Server
}

// StartHubLeaf starts a hub with hubOpts and a leaf with leafOpts that
// connects to it, and waits until the link is up. Both are shut down with
// tb's cleanup.
func StartHubLeaf(tb testing.TB, hubOpts, leafOpts []Option) *HubLeaf {
	tb.Helper()
	port := freePorts(tb, 1)[0]
	hub := Start(tb, append(append([]Option(nil), hubOpts...), leafListen(port))...)
	url := fmt.Sprintf("nats://%s:%s@%s:%d", DefaultUser, DefaultPassword, hub.host, port)
	leaf := Start(tb, append(append([]Option(nil), leafOpts...), leafRemote(url))...)
	hl := &HubLeaf{Hub: hub, Leaf: leaf}
	Eventually(tb, 10*time.Second, func() bool { return len(hl.Links()) == 1 }, "the leafnode link")
	return hl
}

// Links returns the IDs of the hub's leafnode connections: a link closed
// and made again (the hub closes it for a message over its limit, the
// leaf for one over its own) gets a new ID.
func (hl *HubLeaf) Links() []uint64 {
	if hl.Hub.srv == nil {
		return nil
	}
	lz, err := hl.Hub.srv.Leafz(&server.LeafzOptions{})
	if err != nil {
		return nil
	}
	ids := make([]uint64, 0, len(lz.Leafs))
	for _, l := range lz.Leafs {
		ids = append(ids, l.ID)
	}
	return ids
}
