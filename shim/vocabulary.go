package shim

import (
	"errors"
	"time"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/outcome"
)

// Error codes: the Code of a *Error, package outcome's (the one
// vocabulary of shim and claimcheck: see its doc). A responder may use any
// code (micro services commonly use HTTP-like numbers such as "400");
// these are the ones natssend produces. README.md's table gives each
// error of shim and claimcheck with its code and outcome (see Classify and
// Describe).
const (
	CodePayloadTooLarge      = outcome.CodePayloadTooLarge      // a message did not fit max_payload (see outcome)
	CodeInvalidArgument      = outcome.CodeInvalidArgument      // the input was rejected before any work
	CodeInternal             = outcome.CodeInternal             // the responder failed
	CodeDeadlineExceeded     = outcome.CodeDeadlineExceeded     // no reply before the deadline
	CodeCanceled             = outcome.CodeCanceled             // the caller's context was cancelled
	CodeNoResponders         = outcome.CodeNoResponders         // nobody was subscribed to the subject
	CodeUnavailable          = outcome.CodeUnavailable          // the connection was closed or reconnecting
	CodeNotFound             = outcome.CodeNotFound             // a stored payload or the bucket is gone
	CodeDataLoss             = outcome.CodeDataLoss             // a reference or payload is not what it claims
	CodePermissionDenied     = outcome.CodePermissionDenied     // the server refused a publish or subscription
	CodeReplyLost            = outcome.CodeReplyLost            // the operation completed, its claim-checked reply unread
	CodeClaimCheckUnresolved = outcome.CodeClaimCheckUnresolved // a claim-checked request could not be resolved; not run
	// CodeStreamBroken is the code of a transfer stream that ended before
	// its end frame (frames lost beyond recovery, the responder gone
	// silent, a digest mismatch, a peer that broke the frame protocol:
	// ErrStreamProtocol): OutcomeUnknown, errors.Is(err, io.ErrUnexpectedEOF).
	CodeStreamBroken = outcome.CodeStreamBroken
)

// Header names used on the wire.
const (
	// HeaderErrorCode and HeaderError are micro's error reply headers
	// (micro.ErrorCodeHeader, micro.ErrorHeader). natssend reads and writes
	// them, so natssend clients and micro services understand each other.
	HeaderErrorCode = callerr.HeaderErrorCode
	HeaderError     = callerr.HeaderError
	// HeaderTimeout carries the time the caller still waits, in whole
	// milliseconds (rounded up), so a responder can stop working once the
	// caller has given up. A relative value is immune to clock skew between
	// hosts. Handler measures it from the moment it starts handling the
	// request: time the request spent in transit or queued in the
	// subscription is not subtracted (a message does not record when it
	// arrived), so the responder's deadline can be later than the caller's.
	HeaderTimeout = "Natssend-Timeout"
	// HeaderOutcome marks an error reply made from Reject or
	// InvalidArgument: its value "rejected" states that the request had no
	// effect.
	HeaderOutcome = callerr.HeaderOutcome
	// HeaderOperationID carries a call's operation ID (see OperationID).
	HeaderOperationID = "Natssend-Operation-Id"
	// HeaderAcceptClaimCheck is sent with every request of a Client made with
	// WithClaimChecks. Its value says where the caller's claim-check store is
	// and what the caller's connection accepts:
	// "<bucket>; domain=<JetStream domain>[; reads=<domain>,...];
	// max-payload=<bytes>", reads naming the other domains the caller's
	// Store may read (claimcheck.WithDomains). A handler with
	// ServeClaimChecks on a Store of one of those domains (any bucket: the
	// reference names it) may answer with a claim-checked reply, and
	// every reply is decided against the smaller of the responder's limit and
	// the caller's max-payload. A value with only a bucket (an older caller)
	// asks for a Store of that bucket.
	HeaderAcceptClaimCheck = "Natssend-Accept-Claim-Check"
	// HeaderMaxPayload is sent with every request of a Client without
	// WithClaimChecks (HeaderAcceptClaimCheck says it for the others): the
	// caller connection's max_payload (with CapPayload's cap), in bytes.
	// A responder decides its reply, and sizes a stream's frames,
	// against the smaller of its own limit and this one: across a leafnode
	// to a site with a lower limit, one message over it closes the whole
	// link.
	HeaderMaxPayload = "Natssend-Max-Payload"
	// HeaderStream marks a RequestStream request: "1 <window bytes> <idle
	// ms> <first-frame ms> <digests>", the protocol version, the most credit
	// the caller may grant past what it received (the responder starts with
	// at most InitialStreamWindow of it), its idle bound, how long it waits
	// for the first frame (0: not said) and the digests it checks beyond
	// SHA-256 ("hw256": HighwayHash-256). A caller before this version sent
	// the first three or four fields. StreamHandler answers only requests
	// that carry it.
	HeaderStream = "Natssend-Stream"

	outcomeRejected = callerr.OutcomeRejected // HeaderOutcome's value
)

// Call defaults and bounds.
const (
	// DefaultTimeout is a Client's deadline for calls whose context has none
	// and that set no Timeout.
	DefaultTimeout = 10 * time.Second
	// DefaultAttemptTimeout is how long an attempt of a call with Attempts
	// and OperationID waits for its reply before the request is sent again
	// (see AttemptTimeout).
	DefaultAttemptTimeout = 2 * time.Second
	// MaxOperationIDLen is the longest operation ID OperationID accepts.
	MaxOperationIDLen = 128
)

// Errors to match with errors.Is.
var (
	// ErrPayloadTooLarge is the errors.Is target for every refusal because of
	// size: a request, reply or publish that did not fit, and a
	// PAYLOAD_TOO_LARGE error reply from a responder. The two differ in what
	// they mean for the caller: a local refusal was not sent (OutcomeNotRun),
	// while a PAYLOAD_TOO_LARGE reply (also errors.Is ErrReplyTooLarge) comes
	// from a responder that may already have done the work (OutcomeUnknown).
	// Check Classify before sending a smaller request again.
	ErrPayloadTooLarge = outcome.ErrPayloadTooLarge
	// ErrReplyTooLarge matches a PAYLOAD_TOO_LARGE error reply: the responder
	// ran, but its reply did not fit its connection's max_payload.
	ErrReplyTooLarge = outcome.ErrReplyTooLarge
	// ErrReplyLost matches (errors.Is) a call whose operation completed but
	// whose claim-checked reply could not be read: see CodeReplyLost. The
	// cause (context.DeadlineExceeded, claimcheck.ErrMissing, ...) stays
	// visible to errors.Is as well.
	ErrReplyLost = outcome.ErrReplyLost
	// ErrInvalidOption is wrapped by every error about an invalid option
	// value in natssend (it is claimcheck.ErrInvalidOption): a Client built
	// with an invalid Option refuses every call with it (INVALID_ARGUMENT, not
	// run), a call with an invalid CallOption is refused the same way, and a
	// Handler with an invalid HandlerOption answers every request with it. A
	// nil option is ignored.
	ErrInvalidOption = claimcheck.ErrInvalidOption
	// ErrReconnectBuffer is returned by Connect when an option re-enables
	// outgoing reconnect buffering.
	ErrReconnectBuffer = errors.New("natssend: outgoing reconnect buffering must stay disabled (a buffered request is delivered after reconnect, even when the caller already gave up)")
	// ErrNoConn is reported once to OnError, on the first request with a
	// reply subject, by a Handler made without the Conn option. nats.go's
	// Subscription does not expose its connection, so such a Handler cannot
	// know the responder connection's limit: its size refusals say Limit 0, a
	// reply made right after a reconnect is retried for a few milliseconds
	// instead of waiting for the new link's limit, and a reply ready while
	// the connection is reconnecting is dropped instead of waiting for the
	// reconnect. Pass Conn(nc) with the subscription's connection, or use
	// Serve, which does.
	ErrNoConn = errors.New("natssend: Handler made without the Conn option: replies cannot use the responder connection's limit (pass shim.Conn(nc) with the subscription's connection)")
	// ErrSequenceReused is returned (yielded) when the sequence of a
	// RequestMany is ranged over a second time: its request is sent once, on
	// the first range, and never again.
	ErrSequenceReused = errors.New("natssend: RequestMany's sequence ranged over again")
)
