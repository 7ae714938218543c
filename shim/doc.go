// Package shim is what services import instead of calling nats.go's send
// methods directly. It makes the two places where NATS services quietly
// lose data or do things twice safe:
//
//  1. Size. The server counts the header block in max_payload; a message
//     over the limit is refused or, if it reaches the server, gets the
//     connection closed, failing everything else on it. A reply that is too
//     large leaves its caller waiting for a timeout. HeaderSize and MsgSize
//     count exactly what the server counts, every shim send checks it
//     against the connection's current, account-adjusted limit and
//     refuses a message that does not fit before anything is written
//     (PAYLOAD_TOO_LARGE, OutcomeNotRun). Larger messages go as claim
//     checks only on purpose, through a claimcheck.Store the service set
//     up (Store.PublishMsg, WithClaimChecks, ServeClaimChecks): nothing
//     implicit stores data. A subject so long that the message's protocol
//     line could exceed 4096 bytes (nats-server's default
//     max_control_line, which the server does not announce; the sizes and
//     the reply subject count, and a request's own inbox is reserved)
//     would get the connection closed too: every send refuses it with
//     INVALID_ARGUMENT (nats.ErrBadSubject), nothing sent.
//
//  2. Uncertain outcomes. A timeout, a lost connection or an oversized
//     reply can follow an operation that already ran. Client sends each
//     request once, with one deadline, and never retries unless asked to
//     (Attempts, which repeats an operation that may have run only under
//     an OperationID; see "Operation IDs"); every error tells (Classify,
//     MayHaveRun) whether the request certainly did not run or may have
//     run, in which case the caller must reconcile before doing anything
//     again.
//
// # Connecting
//
// Connect disables nats.go's outgoing reconnect buffer (a request buffered
// while reconnecting is delivered after reconnect, even when its caller has
// already timed out) and makes sure no message sent on the connection gets
// it closed for its size: right after every connect and reconnect the
// server announces the connection's account- or user-adjusted max_payload
// in a second INFO, and until nats.go has parsed it its own check uses the
// server-wide value. Checking in natssend before sending cannot close that
// window (a reconnect can come between the check and the send, and
// nats.go holds its lock while it reconnects), so Connect installs a
// dialer that makes each link's first INFO announce a placeholder
// max_payload (0 on the first link, after a reconnect at most 4 KiB and
// never above an earlier link's limit): until the real limit arrives
// nats.go refuses every message above it without writing anything, and
// natssend's senders wait for the limit and decide again. This covers nats:// and tls:// connections to nats-server
// 2.10 and later; TLS-handshake-first, websocket and in-process
// connections, connections not made by Connect and older servers get a
// round trip after each reconnect instead, which leaves a short window.
//
// Every natssend sender on a connection (Client, Publish*, the claimcheck
// Store, the reply helpers of a handler subscribed with Serve or given the
// Conn option) shares one limit state for it, kept in a package-level
// registry keyed by the connection (entries of closed connections are
// dropped): the one piece of global state in natssend. Each send makes one
// decision against it (fits, claim check, or refuse), after every input
// check and before any irreversible work.
//
// CapPayload lowers that limit to the smallest max_payload on the path the
// connection's messages travel: across a leafnode to a site with a lower
// limit the receiving server closes the whole leafnode link for one
// message over it, and the sending side is never told. Replies need no
// cap: every request of a Client says what the caller's connection
// accepts (HeaderMaxPayload, or the max-payload of HeaderAcceptClaimCheck),
// and responders decide replies, size stream frames and size a
// claim-checked reply's chunks against the smaller of that and their own
// limit.
//
// The server reports a denied publish or subscription only through the
// connection's asynchronous error callback. Connect reports it to the
// connection's limit state (and then calls the callback given with
// nats.ErrorHandler): natssend's waits on the denied subject end at once
// with a PERMISSION_DENIED error naming it (errors.Is
// nats.ErrPermissionViolation) instead of at their deadline.
//
// # Options
//
// An invalid option value is an error wrapping ErrInvalidOption (the same
// value as claimcheck.ErrInvalidOption): a Client built with one refuses
// every call with it, a call with an invalid call option is refused, a
// Handler with an invalid HandlerOption answers every request with an
// INTERNAL error reply and reports the error to OnError. Nil options are
// ignored. A nil context, message or connection is an INVALID_ARGUMENT
// refusal, never a panic.
//
// Each call takes only the options it honours (CallOption for Request,
// StreamOption for RequestStream, ManyOption for RequestMany; Timeout and
// OperationID are CommonOptions, Attempts and AttemptTimeout
// AttemptOptions), so an option a call would ignore does not compile:
//
//	c.RequestStream(ctx, "export", q, shim.StreamWindow(1<<20), shim.Timeout(time.Minute))
//	c.RequestMany(ctx, "vote", q, shim.MaxReplies(3))   // shim.StreamWindow here does not compile
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
// Serve and ServeQueue subscribe a Service (Unary, JSON or Stream: a
// function and its HandlerOptions) on the connection its replies use, and
// refuse one that cannot serve before subscribing:
//
//	sub, err := shim.Serve(nc, "orders.create", shim.JSON(create))
//
// Respond, RespondError and the handlers reply with the reply's own
// headers only, check the reply's size, and answer an oversized reply with
// a PAYLOAD_TOO_LARGE error reply so the caller learns at once. The older
// adapters (Handler, JSONHandler, StreamHandler) keep working with the
// Conn option. Replies to micro requests go through RespondMicro and
// RespondMicroError.
//
// # Operation IDs: the one retry that is safe
//
// A request whose outcome is unknown (a timeout, a lost connection, an
// INTERNAL reply) may have run; sending it again blindly can run it twice.
// It can be sent again safely only when the responder recognises the
// repeat. The call option OperationID names the operation (the same ID on
// every attempt), and Attempts(n) sends it up to n times within the call's
// one deadline: not-run failures always, unknown outcomes only with an
// OperationID, rejections never. Retry does the same for code that is not
// a single Client call, and repeats only not-run failures.
//
//	reply, err := c.Request(ctx, "orders.create", body,
//		shim.OperationID(orderID), shim.Attempts(3))
//
// The responder's half of the contract: a handler reads the ID with
// OperationIDFrom(ctx) and makes its effect conditional on the ID in the
// same atomic step as the effect itself: the ID as a unique key in the
// same database transaction as the write, or a create-if-absent keyed by
// the ID (JetStream KeyValue Create, a conditional put, a stream publish
// with Nats-Msg-Id set to the ID). A repeat then finds the earlier result
// and answers with it, the same answer as the first time.
//
// A separate de-duplication store is not enough, written before or after
// the effect. Written before ("seen ID x", then do the work), a crash or a
// failed write between the two leaves the ID recorded and the effect not
// done: the repeat is skipped and the operation never happens. Written
// after (do the work, then "seen ID x"), a crash between the two leaves
// the effect done and the ID unrecorded: the repeat does it again. Only
// one atomic step that both checks the ID and makes the effect closes the
// gap. examples/safe shows an order service built that way.
//
// # Attempts: the schedule
//
// A call with Attempts(n) (or with WithClaimChecks) answers to one reply
// inbox of its own, shared by all its attempts: a reply to any attempt
// answers the call. Each attempt is sent with all the time the call has
// left in HeaderTimeout. Then:
//
//   - With an OperationID, an attempt that was sent waits AttemptTimeout
//     (DefaultAttemptTimeout, 2 s, unless set) for a reply, and the request
//     is sent again when none came; the last attempt waits for all the time
//     left. A slow responder still answers the call: its reply to the
//     first attempt is taken whenever it comes within the deadline.
//   - Without an OperationID, an attempt that was sent is never repeated:
//     it waits for all the time left.
//   - A failure that certainly did not run (no responders, the connection
//     down before the send, a failed upload of a claim-checked request) is
//     sent again after a backoff with jitter (20 ms doubling to 500 ms),
//     with or without an OperationID. A refusal that would be the same again
//     (invalid input, too large, a closed connection, the caller's own
//     cancellation) and a rejection end the call. Retry follows the same
//     rule for not-run failures.
//   - A claim-checked request is stored once per call, sent by every
//     attempt as the same reference, and deleted once when the call ends.
//   - A claim-checked reply that cannot be read (CodeReplyLost: the
//     responder ran and stored it) is an unknown outcome like any other:
//     sent again under an OperationID, the end of the call without one.
//   - The call's deadline is its own Timeout when it sets one, longer or
//     shorter than the Client's WithTimeout, and ctx's if earlier; every
//     attempt is scheduled within it, with or without claim checks.
//   - An attempt's own answer that would end the call (an error reply or
//     no responders on the last attempt, or one not sent again) is held
//     while an earlier attempt is unanswered, up to the deadline: a
//     responder that de-duplicates on the operation ID may fail a repeat
//     at once while the first delivery still runs.
//
// So Attempts never fails a call that one attempt would have completed
// within the same deadline; n only bounds how often the request is sent.
// RequestStream follows the same schedule for the wait for its first
// frame: each attempt has a reply inbox of its own, and the first stream
// to start, of any attempt, is the call's.
//
// # RPC overflow
//
// A request or reply above the limit can travel as a claim check, opt-in
// on both sides: the Client with WithClaimChecks, the responder with
// ServeClaimChecks on Handler and JSONHandler, or, for a micro endpoint,
// ResolveMicro and RespondMicroClaimCheck. Both sides need a
// claimcheck.Store on the same bucket (a short TTL, a few times the
// longest call, is the backstop for payloads a crash leaves behind):
//
//	st, _ := claimcheck.New(ctx, js, claimcheck.WithTTL(10*time.Minute))
//	c := shim.NewClient(nc, shim.WithClaimChecks(st))
//	shim.Serve(nc, "datasets.query", shim.Unary(query, shim.ServeClaimChecks(st)))
//
// The call keeps every guarantee of a small one: one deadline over the
// request upload, the call, the responder's resolve, its reply upload and
// the caller's download; one send, never a replay; exact outcomes. An
// upload that fails is OutcomeNotRun with nothing sent; a request the
// responder cannot resolve (missing, corrupt, stored for another subject,
// out of time) is a rejection, CodeClaimCheckUnresolved, and the handler
// does not run; a reply that cannot be read is OutcomeUnknown with
// CodeReplyLost (ErrReplyLost): the operation completed, its reply was
// lost. The caller owns both payloads and deletes them (the request's when
// the call ends, the reply's after reading it); a responder never deletes
// a request's payload. A caller that gave up (cancelled, out of time, or
// an attempt it no longer waits for) still deletes a claim-checked reply
// whenever it arrives while its connection lives (a responder working
// through a backlog answers long after the caller's deadline, which it
// measures from when it starts), and a responder whose deadline
// (HeaderTimeout) has passed does not store its reply, or deletes it
// instead of sending it when the deadline passed during the upload. Each
// reply is stored once: when several responders answer one request (a
// subject served by plain subscriptions), the first stored reply is the
// call's and the others are not stored. Only a crash of one side or a lost
// connection can leave a payload behind, until the bucket's TTL.
//
// Peers that do not opt in behave as before: a Client without
// WithClaimChecks refuses an oversized request locally and does not
// announce HeaderAcceptClaimCheck (only HeaderMaxPayload), so responders
// answer an oversized reply with PAYLOAD_TOO_LARGE; a Handler without ServeClaimChecks answers a
// claim-checked request with the CodeClaimCheckUnresolved rejection
// without running fn, and ignores the accept header.
//
// # Telemetry
//
// Every send records OpenTelemetry spans and metrics (the messaging
// conventions as NATS's .NET client reports them: messaging.system "nats",
// messaging.operation.name and .type, messaging.nats.*, span kinds
// Client, Server, Producer and Consumer, and natssend.outcome, the
// Classify value of the result) and carries the trace context in its
// headers, injected before the size decision so that it counts against
// the limit like any header, in canonical keys (Traceparent), which
// propagation.HeaderCarrier(msg.Header) reads; any case is read. Handlers
// continue the caller's trace in fn's context. Inboxes are named by a
// template and marked messaging.destination.temporary, never by their
// unique subject. With no option the global providers and propagator
// (otel.GetTracerProvider, GetMeterProvider, GetTextMapPropagator) are
// used, resolved at each send; an application that configures no SDK
// pays only the look-up. Package telemetry's options set them, or turn
// telemetry off, for a Client (WithTelemetry) and a handler (Telemetry),
// as for a claim-check Store; telemetry.WithDestinationName maps subjects
// with IDs in them to one attribute value, to keep metric cardinality
// down.
// docs/telemetry.md lists every span and metric with its attributes.
//
// # Errors
//
// Every error is a *Error with a Code (CodePayloadTooLarge,
// CodeInvalidArgument, ...); errors.Is(err, ErrPayloadTooLarge) matches
// every size refusal, and the nats.go and context errors underneath stay
// visible to errors.Is (nats.ErrTimeout, context.DeadlineExceeded,
// nats.ErrNoResponders, nats.ErrConnectionClosed, ...). Classify and
// MayHaveRun answer for package claimcheck's errors too, and Describe gives
// any error of either package as a *Error with its code and outcome: one
// vocabulary, one table (the README's "What each error means for the
// caller").
//
// # Transfer streams
//
// Client.RequestStream asks a StreamHandler for a reply of any size,
// delivered while it is produced (a dataset export, a file, a log tail, an
// LLM answer token by token); the caller reads a ReplyStream, an
// io.ReadCloser, as it reads an HTTP response body:
//
//	shim.ServeQueue(nc, "datasets.export", "export", shim.Stream(export))
//
//	rs, err := c.RequestStream(ctx, "datasets.export", query)
//	if err != nil { ... }  // no responders: OutcomeNotRun; an error before the first write: its *Error
//	defer rs.Close()
//	_, err = io.Copy(dst, rs) // nil only after the end frame and a matching digest
//
// The request is sent once, as Request sends it (size check, headers,
// claim checks with WithClaimChecks and ServeClaimChecks), with
// HeaderStream. The responder's frames go to the caller's inbox, each
// with the responder's control inbox as its reply subject and a stream
// offset as its sequence number: a start frame with the StreamWriter's
// headers, data frames sized to the responder connection's current limit
// or the caller's, whichever is lower (at most a quarter of the starting
// credit), and an end frame with the
// length and digest of the whole body (or an error frame with the
// handler's error). The digest is HighwayHash-256 under a fixed public
// key (the hash nats-server checks its stored messages with, about five
// times SHA-256's speed) when both sides are of this version, SHA-256
// when either is older; it detects frames lost, doubled or reordered and
// corrupted buffers, not a forger (the responder writes body and digest
// alike; TLS is what protects a connection against an attacker). The caller grants credit (a window that starts at
// InitialStreamWindow and grows up to StreamWindow, DefaultStreamWindow by
// default, when a long path rather than the reader bounds the transfer:
// the responder reports waits for credit on a path whose round trip, timed
// by the caller's acknowledgement of its start frame, is 10 ms or more,
// and a growth that did not raise the delivery rate by a quarter ends the
// growth for the rest of the stream) and
// acknowledges what it received; Write blocks while the window is full,
// so a slow reader slows the writer and nothing is dropped for being
// slow. The writer keeps unacknowledged frames: a gap in the offsets (a
// frame lost to a slow consumer or a reconnect, seen at the next frame or
// heartbeat) makes the caller ask for them again, so a server restart or
// a reconnect does not end a long transfer; a loss that is not repaired
// within the idle bound fails the stream. Memory on each side is bounded
// by the window plus a frame or two, never by the body.
//
// What the caller can rely on: Read returns the bytes exactly as written,
// in order, and io.EOF only after the end frame's length and digest
// matched. A stream cut short (the responder gone silent for the idle
// bound StreamIdle, DefaultStreamIdle by default; frames lost for good; a
// digest mismatch) fails with CodeStreamBroken, matching
// io.ErrUnexpectedEOF, OutcomeUnknown. A handler's error after its first
// write arrives after the bytes written before it, with its code as
// Handler maps it (a panic is INTERNAL). ctx bounds the whole stream (a
// Read past its deadline matches context.DeadlineExceeded); Timeout and
// WithTimeout bound only the wait for the first frame, and Attempts and
// OperationID apply only until it arrived.
//
// What the responder can rely on: its context ends (context.Cause is
// ErrStreamCanceled or ErrCallerGone) and Write fails when the caller
// closes the stream (within about a second), when the caller's deadline
// passes, and when the caller goes silent for the idle bound or its inbox
// disappears; both sides send a heartbeat or keepalive every fifth of the
// idle bound. The StreamWriter is safe for concurrent use; a goroutine
// that outlives the StreamHandlerFunc gets ErrStreamClosed from Write and
// Flush.
//
// Bounds that hold whatever the peer sends (a peer that breaks the
// protocol is treated as below, never trusted to stop):
//
//   - Memory: the caller holds at most its window of received, unread
//     bytes (plus the message being delivered); the responder at most
//     the window of unacknowledged frames, plus the frame it is filling
//     and a few spare frame buffers. No frame goes past the credit the
//     caller granted: the responder splits a frame at the credit's edge.
//   - Idle: each side gives a stream up after the idle bound without a
//     valid frame, heartbeat or control message from the other (the
//     caller ErrStreamIdle, the responder ErrCallerGone); a loss not
//     repaired within it is ErrStreamLost. Forged, malformed and foreign
//     messages do not count as signs of life.
//   - End acknowledgement: after its end or error frame the responder
//     waits at most twice the idle bound for the caller's final
//     acknowledgement, resending what the caller asks for meanwhile;
//     keepalives and resend requests do not extend it. Then the handler's
//     adapter returns (OnError: CodeStreamBroken, ErrCallerGone).
//   - First frame: the caller waits for the first frame at most the
//     call's Timeout (the Client's WithTimeout when the call sets none)
//     and ctx; only a start frame or an answer (no responders, an error
//     reply) ends the wait early, and no message extends it. The
//     responder's context ends (ErrCallerGone) when that wait is over
//     before its first Write or Flush.
//   - The whole stream: ctx, whose deadline the responder gets too
//     (HeaderTimeout).
//
// What ends a stream at once, as broken (CodeStreamBroken,
// ErrStreamProtocol, io.ErrUnexpectedEOF, OutcomeUnknown; the caller
// tells the responder, the responder's context ends with
// ErrStreamProtocol): from the responder, a frame beyond the credit
// granted; an end, error or heartbeat frame whose offset is below the
// bytes already delivered; a start frame not at offset 0 or naming a
// digest the caller did not offer; an end frame whose digest is not 32
// bytes; a frame shorter than its prefix or of no known kind. From the caller, credit beyond the window it declared past
// what it acknowledged; an acknowledgement of bytes never sent; a final
// acknowledgement before the end; a resend request from beyond what was
// sent; an empty, malformed or unknown control message. An end frame
// whose digest does not match is ErrStreamCorrupt. Duplicates and
// overlaps (resends) are taken for their new bytes only, and the frames of
// a second responder (a subject served without a queue group) are
// refused and that responder told to stop.
//
// A micro endpoint replies once through micro.Request, which hides the
// request's message and connection, so it cannot stream: subscribe the
// StreamHandler on its subject next to the micro service (the same queue
// group), with Conn. The linter knows RequestStream, RequestMsgStream,
// RequestMany and the StreamWriter's and ReplyStream's methods as shim
// sends, never as raw ones.
//
// # Scatter-gather
//
// Client.RequestMany sends one request and yields every reply as it
// arrives (an iter.Seq2), for votes, discovery and status fan-outs; it
// ends at the deadline, MaxReplies, a StallTimeout gap between two
// replies' arrivals (however long the loop body takes) or a Sentinel such
// as EmptyReply, and is sent once:
//
//	for m, err := range c.RequestMany(ctx, "cluster.status", nil, shim.StallTimeout(200*time.Millisecond)) {
//		...
//	}
//
// # Wire format
//
// The wire format (request headers, error replies, claim-checked RPC,
// stream frames, RequestMany's ends) is specified in docs/protocol.md,
// normative and versioned; this documentation describes the Go API.
package shim
