package natstest

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// ClusterName is the name of the clusters StartCluster makes.
const ClusterName = "natstest"

// node is a Server's place in a cluster.
type node struct {
	name        string
	clusterPort int
	routes      []int // every member's cluster port
}

func (n *node) configText(b *strings.Builder, host string) {
	fmt.Fprintf(b, "server_name: %q\n", n.name)
	fmt.Fprintf(b, "cluster: { name: %q, listen: %q, routes: [", ClusterName, fmt.Sprintf("%s:%d", host, n.clusterPort))
	for i, p := range n.routes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%q", fmt.Sprintf("nats-route://%s:%d", host, p))
	}
	b.WriteString("] }\n")
}

// Cluster is a cluster of in-process servers routed on loopback, each
// with its own random client port, cluster port and store directory.
type Cluster struct {
	tb      testing.TB
	Servers []*Server
}

// StartCluster starts an n-node cluster with the given options on every
// node (JetStream() makes it a clustered JetStream with R up to n),
// waits until the routes are up and, with JetStream, a meta leader is
// elected, and registers its shutdown with tb.Cleanup. A node can be
// stopped (Shutdown) and started again (Restart) on its ports, keeping its
// data.
func StartCluster(tb testing.TB, n int, opts ...Option) *Cluster {
	tb.Helper()
	ports := freePorts(tb, 2*n)
	c := &Cluster{tb: tb}
	routes := ports[n:]
	for i := range n {
		s := &Server{tb: tb, host: "127.0.0.1", port: ports[i], dir: tb.TempDir(),
			node: &node{name: fmt.Sprintf("n%d", i+1), clusterPort: routes[i], routes: routes}}
		c.Servers = append(c.Servers, s)
	}
	errs := make(chan error, n)
	for _, s := range c.Servers {
		go func() { errs <- s.start(opts) }()
	}
	for range n {
		if err := <-errs; err != nil {
			tb.Fatal(err)
		}
	}
	tb.Cleanup(c.Shutdown)
	c.WaitReady(30 * time.Second)
	return c
}

// WaitReady waits until every running node has a route to every other
// running node and, with JetStream, every running node knows the meta
// leader and the meta leader counts every running node as a peer it can
// place assets on (online, with JetStream, its statistics received), so
// that creating a replicated stream right after does not fail with "no
// suitable peers for placement".
func (c *Cluster) WaitReady(d time.Duration) {
	c.tb.Helper()
	deadline := time.Now().Add(d)
	for {
		ok := true
		running := 0
		for _, s := range c.Servers {
			if s.srv != nil {
				running++
			}
		}
		for _, s := range c.Servers {
			srv := s.srv
			if srv == nil {
				continue
			}
			if srv.NumRoutes() < running-1 {
				ok = false
			}
			if s.conf.jetstream && !srv.JetStreamIsCurrent() {
				ok = false
			}
		}
		if ok && !c.metaLeaderSeesAll(running) {
			ok = false
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.tb.Fatalf("natstest: cluster not ready after %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// URLs returns the client URLs of every node, comma separated, as
// nats.Connect takes them.
func (c *Cluster) URLs() string {
	urls := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		urls[i] = s.URL()
	}
	return strings.Join(urls, ",")
}

// StreamLeader returns the node that leads stream of the default account,
// or nil when none does now.
func (c *Cluster) StreamLeader(stream string) *Server {
	for _, s := range c.Servers {
		if s.srv != nil && s.srv.JetStreamIsStreamLeader(DefaultAccount, stream) {
			return s
		}
	}
	return nil
}

// Shutdown stops every node.
func (c *Cluster) Shutdown() {
	for _, s := range c.Servers {
		s.Shutdown()
	}
}

// Name returns the node's server name ("n1", "n2", ...), or "" for a
// server that is not a cluster member.
func (s *Server) Name() string {
	if s.node == nil {
		return ""
	}
	return s.node.name
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(tb testing.TB, n int) []int {
	tb.Helper()
	ports := make([]int, 0, n)
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		_ = l.Close()
	}
	return ports
}

// WaitStreamCurrent waits until stream (of the default account) has a
// leader and every running node's replica of it is current.
func (c *Cluster) WaitStreamCurrent(stream string, d time.Duration) {
	c.tb.Helper()
	deadline := time.Now().Add(d)
	for {
		ok := c.StreamLeader(stream) != nil
		for _, s := range c.Servers {
			if s.srv != nil && !s.srv.JetStreamIsStreamCurrent(DefaultAccount, stream) {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.tb.Fatalf("natstest: stream %s not current on every node after %v", stream, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// metaLeaderSeesAll reports whether no node runs JetStream, or the meta
// leader lists at least running peers fit for placement.
func (c *Cluster) metaLeaderSeesAll(running int) bool {
	js := false
	for _, s := range c.Servers {
		if s.srv == nil || !s.conf.jetstream {
			continue
		}
		js = true
		if len(s.srv.JetStreamClusterPeers()) >= running {
			return true
		}
	}
	return !js
}
