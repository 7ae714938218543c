// Package examples holds one small order service written twice.
//
// examples/unsafe is written the way NATS services often are: raw
// publishes and requests, a request retried in a loop, the default
// reconnect buffer. natssend-lint reports every one of those places:
//
//	go run ./cmd/natssend-lint ./examples/unsafe/...
//
// Its findings are listed in examples/unsafe/findings.txt, which the tests
// (and make lint) check the linter against.
//
// examples/safe is the same service on natssend's shim and claim checks;
// natssend-lint reports nothing there, and its test runs it against a
// nats-server started in the test with nats-server's own server.NewServer,
// with a payload ten times the broker limit. Like the runnable Example
// functions of shim and claimcheck, it uses only natssend's public API:
// connections come from shim.Connect, every send goes through the shim,
// and every handler is given its connection with shim.Conn. The tests
// here also lint those Example functions as code copied into a service of
// one's own (in place they belong to the shim packages, which natssend
// exempts).
package examples
