// Package natstest starts a real nats-server in-process for tests.
//
// Every test in this module that needs a broker uses it: the server listens
// on a random loopback port, keeps JetStream data in a temporary directory,
// and can be given a small max_payload and accounts with lower limits of
// their own. A server can be restarted on the same port with other options
// (for reconnect tests), keeping its JetStream data.
//
// StartCluster starts a cluster of such servers routed on loopback (random
// client and cluster ports, a store directory per node, clustered
// JetStream when asked for), whose nodes can be stopped and restarted one
// by one, for failover tests.
//
// Proxy (StartProxy, Server.Proxy) is the one fault injection mechanism
// of the suite: a TCP proxy that parses the NATS protocol in both
// directions and cuts, drops, delays or runs a hook (a server restart, a
// cancelled context) at an exact protocol point, such as the n-th chunk
// of an object-store upload or the reply to an inbox.
//
// The server is configured through a generated configuration file, the same
// way operators configure production servers, so account limits take the
// code paths the server uses for real deployments.
package natstest
