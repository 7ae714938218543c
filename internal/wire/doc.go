// Package wire computes message sizes exactly as a NATS server counts them.
//
// The server compares the HPUB total length (header block plus body) with the
// connection's max_payload; subject and reply subject do not count. A header
// block is "NATS/1.0\r\n", one "Key: Value\r\n" line per value (values trimmed
// of surrounding ASCII white space, as nats.go sends them) and a final "\r\n".
// An empty header map is sent as a plain PUB and adds nothing.
//
// The functions take map[string][]string so that both nats.Header and
// http.Header-shaped maps can be passed without conversion, and so that this
// package depends on nothing but the standard library.
//
// The sizes are those of docs/protocol.md, section 1, where the wire
// format is specified.
package wire
