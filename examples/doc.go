// Package examples holds one small order service written twice.
//
// examples/unsafe is written the way NATS services often are: raw
// publishes and requests, a request retried in a loop, the default
// reconnect buffer. natssend-lint reports every one of those places:
//
//	go run ./cmd/natssend-lint ./examples/unsafe/...
//
// examples/safe is the same service on natssend's shim and claim checks;
// natssend-lint reports nothing there, and its test runs it against an
// embedded server with a payload ten times the broker limit.
package examples
