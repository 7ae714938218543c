// Package connlimit keeps a connection's max_payload current.
//
// A NATS server sends the account-adjusted max_payload in an asynchronous
// INFO that follows the PONG answering the client's first PING, so right
// after nats.Connect (and right after every reconnect) nc.MaxPayload() can
// still show the server-wide value. A publish in that window can pass the
// client's own check and get the connection closed by the server. A Tracker
// closes the window: before the first send, and again after every reconnect,
// it performs one PING/PONG round trip, after which the INFO has been
// processed. In between it costs one uncontended lock.
package connlimit
