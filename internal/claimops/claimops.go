// Package claimops gives package shim the parts of package claimcheck
// that only shim uses (RPC overflow's capped and reply claim checks),
// without making them part of claimcheck's public API: one typed
// interface, Ops, that a *claimcheck.Store provides through For.
//
// claimcheck registers For's implementation in its init function and
// nothing changes it afterwards: this is natssend's one other piece of
// package-level state, written once before any user code runs (the
// pattern of the standard library's and x/tools' internal hooks).
// Importing claimcheck, as shim does, guarantees it is set.
package claimops

import (
	"context"
	"crypto/sha256"
	"encoding/base32"

	"github.com/nats-io/nats.go"
)

// Ops is what package shim uses of a *claimcheck.Store.
type Ops interface {
	// Prepare is claimcheck's Prepare with the effective limit lowered to
	// limit when limit is positive (a Client's payload cap, a caller's
	// max_payload). With a replyKey (the caller's, from its accept
	// header), m.Subject is a request's reply subject and the payload is
	// stored under ReplyObjectName(replyKey, m.Subject), once per reply
	// subject (a second responder's reply gets an error for which
	// ReplyStored is true); without one, under a random name.
	Prepare(ctx context.Context, m *nats.Msg, reserve int, limit int64, replyKey string) (*nats.Msg, error)
	// ReplyStored reports whether err, Prepare's, says that another
	// responder's reply to the same request is stored: nothing of this
	// reply is left stored, and nothing is to be sent.
	ReplyStored(err error) bool
	// Domains returns the other JetStream domains the Store may read
	// (claimcheck.WithDomains), sorted: a caller's accept header names
	// them, so that a responder in one of them may store a reply there.
	Domains() []string
	// CanDelete reports whether the Store's user may delete payloads (its
	// refusal, errors.Is nats.ErrPermissionViolation), asking the server
	// once: RPC overflow deletes both payloads of every call.
	CanDelete(ctx context.Context) error
}

// of is claimcheck's For, registered by its init.
var of func(store any) Ops

// Register sets For's implementation; claimcheck's init calls it once.
func Register(f func(store any) Ops) { of = f }

// For returns the Ops of a *claimcheck.Store.
func For(store any) Ops { return of(store) }

// nameEncoding is the object names' alphabet (claimcheck's).
var nameEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// ReplyObjectName is the object name of the claim-checked reply to the
// reply subject subject of a call with the reply key key: derived from
// both, so that a caller that never received the reference can still
// delete the payload, and nobody without the request can predict it
// (docs/protocol.md, claim-checked replies). "" without a key: the reply
// gets a random name.
func ReplyObjectName(key, subject string) string {
	if key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("natssend reply\x00" + key + "\x00" + subject))
	return nameEncoding.EncodeToString(sum[:16])
}
