// Package analyzer defines the natssend analysis pass (go/analysis), which
// reports NATS sends that bypass the natssend shim, sends that are retried
// on failure, and connections that keep nats.go's outgoing reconnect
// buffer.
//
// The pass imports no NATS code. It recognizes the nats.go API by package
// path, receiver type name and method name of the resolved *types.Func, so
// linting never needs nats.go itself, and a look-alike (a local type named
// Conn with a Publish method, another package's Publish, a shadowed
// identifier) is never mistaken for it. Methods promoted through embedded
// fields (a struct embedding *nats.Conn) and interface methods inherited by
// embedding (jetstream.JetStream embeds jetstream.Publisher) resolve to the
// declaring method and are recognized.
//
// Use [Analyzer] with a driver (cmd/natssend-lint, go vet -vettool), or
// [New] with a [Config] (the golangci-lint plugin does).
//
// # Raw sends (category "rawsend")
//
// Reported, outside the shim packages ([Config.ShimPackages]):
//
//   - (*nats.Conn) Publish, PublishMsg, PublishRequest, Request, RequestMsg,
//     RequestWithContext, RequestMsgWithContext: use shim.Publish,
//     shim.PublishMsg, or (*shim.Client).Request / RequestMsg (capped size,
//     one deadline, no replay);
//   - (*nats.Msg) Respond, RespondMsg: use shim.Respond, which checks the
//     reply size header-accurately (an oversized reply otherwise leaves the
//     caller waiting for a timeout);
//   - the JetStream publishes of nats.JetStream (legacy, also through
//     nats.JetStreamContext) and jetstream.Publisher (also through
//     jetstream.JetStream): Publish, PublishMsg, PublishAsync,
//     PublishMsgAsync: use claimcheck (*Store).PublishJetStream;
//   - micro.Request Respond, RespondJSON, Error: use shim.RespondMicro and
//     shim.RespondMicroError;
//   - (*nats.EncodedConn) Publish, Request, PublishRequest.
//
// Calls are reported wherever they are: in go and defer statements, in
// function literals, in generic code. So are method values (f :=
// nc.Publish) and method expressions ((*nats.Conn).Publish). A call through
// an interface of the caller's own (an interface with a Publish method that
// a *nats.Conn satisfies), or through a type parameter, cannot be resolved
// statically and is not reported.
//
// Suggested fixes rewrite nc.Publish(s, d) to shim.Publish(nc, s, d),
// nc.PublishMsg(m) to shim.PublishMsg(nc, m) and m.Respond(d) to
// shim.Respond(m, d, nil), adding the shim import (or reusing it, or
// importing it as natsshim when the name shim is taken). A receiver reached
// through embedded fields is spelled out (s.Publish becomes
// shim.Publish(s.Conn, ...)). No fix is offered where the rewrite would not
// be exact: a receiver of type nats.Conn rather than *nats.Conn, a method
// value, RespondMsg.
//
// # Retried sends (category "retry")
//
// A send is a call of a raw send API, of the shim (shim.Publish,
// shim.PublishMsg, shim.PublishContext, shim.PublishMsgContext,
// shim.Respond, shim.RespondError, shim.RespondMicro,
// shim.RespondMicroError, (*shim.Client).Request and RequestMsg), of
// claimcheck ((*Store).PublishMsg, PublishJetStream, Prepare), or of a
// function known to send. A function is known to send if its body, outside
// function literals (a literal called on the spot counts as body), calls a
// send; the analyzer exports this as an object fact, so wrappers in other
// packages count too, transitively. A function that only sends from a
// callback it registers (a Subscribe handler) is not a sender. nats.go's own
// packages are not analyzed and export no facts (only the raw send APIs
// above count there: nats.Connect, Subscribe, Flush, Ack, NextMsg... are
// not sends), and natssend's shim and claimcheck packages export none
// either: only their listed functions are sends, so shim.Connect is not
// one. Other packages configured as shim packages are inferred like any
// package. Calling a function literal that sends, on the spot or through a
// local variable bound once to it, is a send too.
//
// The failure path of a send is a path from the send on which the tests of
// its error (err != nil, err == nil, errors.Is(err, X), err == X, a switch
// on them, a bool holding such a test, or any predicate taking err) say
// the error is not nil; the success path is one on which they say it is
// nil. An error passed through a function that keeps nil nil (err =
// wrap(err)) is still the send's error; fmt.Errorf and errors.New results
// are not. A send is reported when
//
//   - its failure path can reach the same send again while no path on
//     which the error may be nil can (neither a success path nor a path
//     that reaches the send again without testing the error); or
//   - its failure path can reach the same send again with the same
//     arguments while the paths on which the error may be nil reach it
//     only with other arguments: a retry nested in a loop over items (a
//     batch loop, a worker loop over a channel, an outbox relay that drops
//     the head only on success, an index advanced only on success).
//
// "The same arguments" means that no variable the call's receiver and
// arguments depend on (directly or through assignments in the function)
// changed on the way back: a range loop's key and value, a variable
// incremented, assigned from itself (queue = queue[1:]), from a channel
// receive, a method call or a function called without arguments, or whose
// address is taken, change; a variable assigned again from unchanged inputs
// (data, _ := json.Marshal(o)) does not. Arguments that differ on every
// evaluation (send(next())) are never the same.
//
// The check runs on the control-flow graph of the function (go/cfg) and
// decomposes && and || itself, so for loops, for {} with continue,
// labelled continue, goto, switch cases and loops conditioned on the error
// (for err != nil { err = send() }, for errors.Is(err, X) && n < 3) all
// come out the same. Calls that do not return (panic, os.Exit,
// runtime.Goexit, log.Fatal* and log.Panic*, and the Fatal*, FailNow and
// Skip* methods of testing.T, B, F and TB) end a path. A recursive call of
// the enclosing function on the failure path counts as reaching the send
// again. The error must be held in a variable assigned from the call (or
// the call tested directly); once the variable is assigned again, later
// tests are not about this send.
//
// The message names what the user called and what it sends through, and
// its advice depends on the kind of send: a request may have run before a
// timeout (reconcile, or make the operation idempotent); a Core NATS
// publish or reply mostly fails before anything is written, but not after
// a flush or connection error (de-duplicate downstream); a JetStream
// publish is made safe by a fixed message ID (jetstream.WithMsgID):
//
//	call of send (which sends through (*nats.Conn).Request) is retried on failure: a timeout can follow a request that already ran, ...
//
// Not a retry:
//
//   - a loop over items where success loops too: for _, it := range items
//     { if err := send(it); err != nil { log; continue } } reaches the send
//     again on both paths, each time with another item, so it is a batch,
//     not a retry;
//   - a repeat only on an error that means nothing was delivered:
//     nats.ErrNoResponders, jetstream.ErrNoStreamResponse (no subscriber
//     received the message), nats.ErrMaxPayload, shim.ErrPayloadTooLarge,
//     claimcheck.ErrTooLarge (refused before sending),
//     claimcheck.ErrNotPublished and claimcheck.ErrClosed (nothing
//     published), shim.Classify(err) == shim.OutcomeNotRun or
//     shim.OutcomeRejected, !shim.MayHaveRun(err). Such a test counts
//     wherever it comes: first, or after err != nil (if err != nil { if
//     errors.Is(err, nats.ErrNoResponders) { continue }; return err }), or
//     as a later switch case;
//   - a JetStream publish whose message ID is fixed across the retry
//     (jetstream.WithMsgID(id) or nats.MsgId(id) among its options, or a
//     Nats-Msg-Id header set with Header.Set, Header.Add or a Header
//     literal): the server de-duplicates it within the stream's duplicate
//     window, so the repeat is safe. Fixed means built from constants,
//     parameters, package-level variables and variables not assigned on
//     the retry path, possibly through pure functions such as fmt.Sprintf;
//     an ID set per item in an outer batch loop is fixed across the
//     nested retry, an ID that changes per attempt (a fresh nuid) is not.
//     The Core NATS publish has no such protection, header or not;
//   - a send in a go statement, or one whose error is discarded.
//
// A send inside a function literal passed to a retry helper
// ([Config.RetryHelpers]: backoff.Retry, retry.Do, wait.Poll...), directly,
// converted to the helper's function type (backoff.Operation(func() ...))
// or through a variable, is reported, as is the helper call when a named
// function that sends is passed to it. For the helpers whose semantics are
// known, the send is reported only if the literal can ask for another
// attempt after it: cenkalti/backoff (v4, v5) and avast/retry-go retry any
// error not wrapped by backoff.Permanent or retry.Unrecoverable,
// k8s.io/client-go/util/retry any error, and sethvargo/go-retry only errors
// wrapped by retry.RetryableError; returning the send's own error where it
// is nil or means nothing was delivered does not count. Other helpers
// (wait.Poll..., configured ones) report every send inside.
//
// # Reconnect buffering (category "reconnectbuf")
//
// nats.Connect outside the shim packages is reported when its options do
// not include nats.ReconnectBufSize(-1) (or nats.NoReconnect()), or set a
// non-negative constant size (0 also means the 8 MiB default): while
// reconnecting, nats.go buffers outgoing messages and delivers a request
// after its caller already timed out. The message points to shim.Connect.
// Only what is visible at the call is judged: options spread from a slice
// (opts...), option values held in variables, options built by other
// functions and non-constant sizes make the outcome unknown, and unknown is
// not reported. Function-literal options are read for assignments to
// ReconnectBufSize and AllowReconnect. (nats.Options).Connect is reported
// for a composite literal that allows reconnecting, for
// nats.GetDefaultOptions(), and for a local variable initialized from
// either, taking later field assignments into account; a parameter, or a
// variable whose address is taken, is not judged.
//
// # Reviewed exceptions
//
// A statement carrying //natssend:reviewed <reason> on one of its lines,
// or on its own line right above the statement (possibly heading a block of
// comments), is not reported for raw sends and connections. A retry is a
// different decision than a size or a connection setting, so it is covered
// only by a directive whose reason starts with "retry:", which covers the
// statement's other findings too:
//
//	//natssend:reviewed retry: idempotent upsert keyed by order ID
//
// A retry reported on a statement that carries a plain directive says so
// in its message. A call spanning several lines is one statement; for if,
// for and switch statements only the header counts, and the lines inside a
// function literal belong to the literal's own statements. Text after a
// further " //" is an ordinary comment, not part of the reason.
//
// The directive is itself checked (category "directive", always enabled):
// a directive without a reason (also "retry:" alone) is reported (it still
// suppresses), as is a malformed one (an unknown //natssend: name) and an
// unused one, which suppresses nothing (a plain directive on a statement
// whose only finding is a retry is reported as unused, with a hint). The
// spaced form "// natssend:reviewed" is reported as malformed only on a
// statement with a reported finding: elsewhere it is prose (a doc comment
// quoting the directive). A directive is not called unused when the
// finding it covers is only hidden by the configuration: in a shim
// package, in a disabled category, or, for a "retry:" directive, on a send
// while the retry check is disabled. With [Config.SkipTests], nothing at
// all is reported in _test.go files, directive problems included.
//
// # Audit
//
// With [Config.Audit] (flag -audit), every finding suppressed by a
// directive is reported as a diagnostic of category "reviewed", whose
// message names the API, the categories suppressed and the reason (without
// a "retry:" prefix: the categories say it):
//
//	reviewed raw (*nats.Conn).Publish (rawsend): liveness probe, 2 bytes
//	reviewed raw (*nats.Conn).Request (rawsend, retry): idempotent upsert keyed by order ID
//
// With the driver's -json flag this is a review log that can be diffed in
// code review; see cmd/natssend-lint for a jq recipe.
//
// # Flags
//
// [Analyzer].Flags: -shim-packages, -retry-helpers and -categories take
// comma-separated lists; -skip-tests and -audit are booleans. A list
// replaces the default: -retry-helpers=example.com/acme/retry.Do drops the
// default helpers, so list the [DefaultRetryHelpers] entries you use as
// well. An unknown
// category or a malformed list entry is a flag error.
package analyzer
