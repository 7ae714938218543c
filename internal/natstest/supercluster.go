package natstest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// SuperCluster is two one-node JetStream clusters, "east" and "west",
// joined by a gateway whose traffic, both ways, passes a DelayLine:
// a supercluster whose clusters are a round trip of twice the delay
// apart. Each node serves the default account (DefaultUser, JetStream
// enabled) as Start's servers do. Its nodes cannot be restarted.
type SuperCluster struct {
	East, West *GatewayNode
	// Lines are the delay lines in front of east's and west's gateway
	// listeners.
	Lines [2]*DelayLine
}

// GatewayNode is a node of a SuperCluster.
type GatewayNode struct {
	Cluster string
	srv     *server.Server
	port    int
}

// URL returns the node's client URL.
func (n *GatewayNode) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }

// Server returns the running nats-server.
func (n *GatewayNode) Server() *server.Server { return n.srv }

// StartSuperCluster starts the two clusters with delay added one way on
// the gateway link (2*delay a round trip), with max_payload set when
// maxPayload > 0, waits until the gateways are up both ways and JetStream
// has a meta leader both clusters know, and registers the shutdown with
// tb.Cleanup.
func StartSuperCluster(tb testing.TB, delay time.Duration, maxPayload int32) *SuperCluster {
	tb.Helper()
	// client, cluster and gateway ports for each node, and a listener
	// for each delay line, taken now so that each config can name the
	// other's line.
	ports := freePorts(tb, 6)
	sc := &SuperCluster{}
	names := [2]string{"east", "west"}
	for i := range 2 {
		// Line i leads to node i's gateway listener.
		sc.Lines[i] = StartDelayLine(tb, fmt.Sprintf("127.0.0.1:%d", ports[4+i]), delay)
	}
	nodes := [2]*GatewayNode{}
	errs := make(chan error, 2)
	for i := range 2 {
		other := 1 - i
		conf := gatewayConfig(tb.TempDir(), names[i], ports[i], ports[2+i], ports[4+i],
			sc.Lines[i].Addr(), names[other], sc.Lines[other].Addr(), maxPayload)
		nodes[i] = &GatewayNode{Cluster: names[i], port: ports[i]}
		go func() {
			srv, err := startConf(conf)
			nodes[i].srv = srv
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			tb.Fatal(err)
		}
	}
	sc.East, sc.West = nodes[0], nodes[1]
	tb.Cleanup(sc.Shutdown)
	sc.waitReady(tb, 60*time.Second)
	return sc
}

// gatewayConfig is the config of one node: its cluster of one, its
// gateway listener (advertised as its delay line, so that the other side
// and anything gossiped reach it through the line), the other cluster's
// gateway through that one's line, JetStream and the default account.
func gatewayConfig(dir, name string, port, clusterPort, gwPort int, ownLine, other, otherLine string, maxPayload int32) string {
	var b strings.Builder
	fmt.Fprintf(&b, "server_name: %q\nlisten: \"127.0.0.1:%d\"\n", name+"1", port)
	if maxPayload > 0 {
		fmt.Fprintf(&b, "max_payload: %d\n", maxPayload)
	}
	fmt.Fprintf(&b, "jetstream: { store_dir: %q, max_memory_store: 1GB, max_file_store: 4GB }\n", filepath.Join(dir, "js"))
	// JetStream in a cluster wants configured routes: a route to itself
	// (which the server recognises and drops) makes a cluster of one.
	fmt.Fprintf(&b, "cluster: { name: %q, listen: \"127.0.0.1:%d\", routes: [ \"nats-route://127.0.0.1:%d\" ] }\n", name, clusterPort, clusterPort)
	fmt.Fprintf(&b, "gateway: { name: %q, listen: \"127.0.0.1:%d\", advertise: %q, gateways: [ { name: %q, url: \"nats://%s\" } ] }\n",
		name, gwPort, ownLine, other, otherLine)
	fmt.Fprintf(&b, "accounts: {\n  %s: { jetstream: enabled, users: [ { user: %q, password: %q } ] }\n}\n", DefaultAccount, DefaultUser, DefaultPassword)
	fmt.Fprintf(&b, "no_auth_user: %q\n", DefaultUser)
	if err := os.WriteFile(filepath.Join(dir, "server.conf"), []byte(b.String()), 0o600); err != nil {
		return ""
	}
	return filepath.Join(dir, "server.conf")
}

// startConf starts a server from a config file and waits until it takes
// connections.
func startConf(confFile string) (*server.Server, error) {
	if confFile == "" {
		return nil, fmt.Errorf("natstest: could not write the config")
	}
	o, err := server.ProcessConfigFile(confFile)
	if err != nil {
		return nil, fmt.Errorf("natstest: config %s: %w", confFile, err)
	}
	o.NoSigs, o.NoLog = true, os.Getenv("NATSTEST_SC_LOGS") == ""
	srv, err := server.NewServer(o)
	if err != nil {
		return nil, fmt.Errorf("natstest: new server: %w", err)
	}
	if !o.NoLog {
		srv.ConfigureLogger()
	}
	go srv.Start()
	if !srv.ReadyForConnections(20 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("natstest: server of %s not ready", confFile)
	}
	return srv, nil
}

// waitReady waits until each node has its outbound gateway (so the link
// is up both ways), both are current with JetStream's meta group and one
// of them leads it.
func (sc *SuperCluster) waitReady(tb testing.TB, d time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for {
		ok := true
		leader := ""
		for _, n := range []*GatewayNode{sc.East, sc.West} {
			srv := n.srv
			if srv.NumOutboundGateways() < 1 || !srv.JetStreamIsCurrent() {
				ok = false
				continue
			}
			if srv.JetStreamIsLeader() {
				leader = n.Cluster
			}
		}
		if ok && leader != "" {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("natstest: supercluster not ready after %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Shutdown stops both nodes.
func (sc *SuperCluster) Shutdown() {
	for _, n := range []*GatewayNode{sc.East, sc.West} {
		if n != nil && n.srv != nil {
			n.srv.Shutdown()
			n.srv.WaitForShutdown()
		}
	}
}
