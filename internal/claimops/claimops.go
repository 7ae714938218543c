// Package claimops gives package shim the parts of package claimcheck
// that only shim uses (RPC overflow's capped and reply claim checks),
// without making them part of claimcheck's public API.
//
// claimcheck sets every variable here in its init function and nothing
// changes them afterwards: this is natssend's one other piece of
// package-level state, written once before any user code runs (the
// pattern of the standard library's and x/tools' internal hooks).
// Importing claimcheck, as shim does, guarantees they are set.
package claimops

import (
	"context"

	"github.com/nats-io/nats.go"
)

// Prepare prepares m as a claim check on a *claimcheck.Store (store):
// claimcheck's Prepare with the effective limit lowered to limit when
// limit is positive (a Client's payload cap, a caller's max_payload). With
// a replyKey (the caller's, from its accept header), m.Subject is a
// request's reply subject and the payload is stored under
// ReplyObjectName(replyKey, m.Subject), once per reply subject (a second
// responder's reply gets an error matching ErrReplyStored); without one,
// under a random name.
type Prepare func(ctx context.Context, store any, m *nats.Msg, reserve int, limit int64, replyKey string) (*nats.Msg, error)

var (
	// PrepareMsg is claimcheck's Prepare for shim (see Prepare).
	PrepareMsg Prepare
	// ReplyObjectName is the object name of the claim-checked reply to
	// the reply subject subject of a call with the reply key key: derived
	// from both, so that a caller that never received the reference can
	// still delete the payload, and nobody without the request can
	// predict it.
	ReplyObjectName func(key, subject string) string
	// ErrReplyStored is matched by the error of a reply claim check when
	// another responder's reply to the same request is stored: nothing of
	// this reply is left stored, and nothing is to be sent.
	ErrReplyStored error
	// Domains returns the other JetStream domains a *claimcheck.Store may
	// read (claimcheck.WithDomains), sorted: a caller's accept header
	// names them, so that a responder in one of them may store a reply
	// there.
	Domains func(store any) []string
	// CanDelete reports whether a *claimcheck.Store's user may delete
	// payloads (its refusal, errors.Is nats.ErrPermissionViolation), asking
	// the server once: RPC overflow deletes both payloads of every call.
	CanDelete func(ctx context.Context, store any) error
)
