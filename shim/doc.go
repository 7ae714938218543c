// Package shim is what services import instead of calling nats.go's send
// methods directly. It makes the two places where NATS services quietly
// lose data or do things twice safe:
//
//  1. Size. The server counts the header block in max_payload; a message
//     over the limit is refused or, if it reaches the server, gets the
//     connection closed, failing everything else on it. A reply that is too
//     large leaves its caller waiting for a timeout. HeaderSize and MsgSize
//     count exactly what the server counts, every shim send checks it
//     against the connection's current, account-adjusted limit, and
//     Publish turns a message that does not fit into a claim check (see
//     package claimcheck).
//
//  2. Uncertain outcomes. A timeout, a lost connection or an oversized
//     reply can follow an operation that already ran. Client sends each
//     request once, with one deadline, and never retries; every error tells
//     (Classify, MayHaveRun) whether the request certainly did not run or
//     may have run, in which case the caller must reconcile before doing
//     anything again.
//
// # Connecting
//
// Connect disables nats.go's outgoing reconnect buffer (a request buffered
// while reconnecting is delivered after reconnect, even when its caller has
// already timed out) and makes sure the account-adjusted max_payload is
// known before the first send and after every reconnect.
//
// # Requests
//
//	c := shim.NewClient(nc, shim.WithTimeout(5*time.Second))
//	reply, err := c.Request(ctx, "orders.create", body)
//	switch shim.Classify(err) {
//	case shim.OutcomeOK:        // use reply
//	case shim.OutcomeNotRun:    // nothing happened; sending again is safe
//	case shim.OutcomeRejected:  // the responder refused; see the *Error code
//	case shim.OutcomeUnknown:   // it may have happened: reconcile first
//	}
//
// # Replies
//
// Respond, RespondError and the Handler adapter reply with the reply's own
// headers only, check the reply's size, and answer an oversized reply with
// a PAYLOAD_TOO_LARGE error reply so the caller learns at once. Replies to
// micro requests go through RespondMicro and RespondMicroError.
//
// # Errors
//
// Every error is a *Error with a Code (CodePayloadTooLarge,
// CodeInvalidArgument, ...); errors.Is(err, ErrPayloadTooLarge) matches
// every size refusal, and the nats.go and context errors underneath stay
// visible to errors.Is (nats.ErrTimeout, context.DeadlineExceeded,
// nats.ErrNoResponders, nats.ErrConnectionClosed, ...).
package shim
