// Package outcome is natssend's one error vocabulary: the codes, the
// outcome kinds (what a caller can know after an error: did the operation
// run?), the structured Error that carries both, and the one table that
// maps nats.go, JetStream and context errors to a code (CodeOf).
//
// Packages shim and claimcheck build their errors with it where they
// fail, so Classify, Describe and MayHaveRun answer for every error either
// returns; shim re-exports the names its callers use (shim.Error,
// shim.Classify, the Code constants), which stay the same types and
// values. It is a leaf: it imports nats.go and nothing of natssend, so a
// service can classify errors without importing the runtime, as grpc's
// codes and status packages do for gRPC.
//
// The wire form of codes and outcomes (micro's error headers and
// Natssend-Outcome) is specified in docs/protocol.md.
package outcome
