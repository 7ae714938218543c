// Package analyzer defines the natssend analysis pass (go/analysis). This
// comment is the analyzer's one documentation source: its "Analyzer
// natssend" section is the Analyzer's Doc, and docs/checks.md, which
// diagnostics link to, follows it section by section.
//
// Use [Analyzer] with a driver (cmd/natssend-lint, go vet -vettool,
// go fix -fixtool=$(command -v natssend-lint) ./... for the suggested
// fixes), or [New] with a [Config] (the golangci-lint plugin does).
//
// # Analyzer natssend
//
// natssend: report raw NATS sends, retried sends, buffered reconnects and claim-check-blind receivers
//
// The natssend analyzer reports NATS sends that bypass the natssend shim
// (category rawsend), sends retried after a failure that may have had an
// effect (category retry), connections that keep nats.go's outgoing
// reconnect buffer (category reconnectbuf), receivers that read a
// message without resolving claim checks where they are in use (category
// receiver), and shim handlers built without their connection (category
// handler). Each message says what and why in one sentence and links to
// docs/checks.md.
//
// The pass imports no NATS code. It recognizes the nats.go API by package
// path, receiver type name and method name of the resolved *types.Func, so
// a look-alike (a local type named Conn with a Publish method, another
// package's Publish, a shadowed identifier) is never mistaken for it.
// Methods promoted through embedded fields and interface methods inherited
// by embedding (jetstream.JetStream embeds jetstream.Publisher) resolve to
// the declaring method and are recognized. Every name matched by string is
// in names.go and sendnames.go (the sends); a test checks them against the
// real packages.
//
// # Raw sends (rawsend)
//
// Reported outside the shim packages ([Config.ShimPackages]): the
// (*nats.Conn) Publish, PublishMsg, PublishRequest and Request* methods;
// (*nats.Msg) Respond and RespondMsg; the JetStream publishes of
// nats.JetStream (also through nats.JetStreamContext) and
// jetstream.Publisher (also through jetstream.JetStream); micro.Request
// Respond, RespondJSON and Error; the (*nats.EncodedConn) sends. Calls are
// reported wherever they are (go and defer statements, function literals,
// generic code), and so are method values (f := nc.Publish) and method
// expressions ((*nats.Conn).Publish).
//
// A NATS value hidden behind an interface of the user's own is reported
// where it flows in (assigned, passed, returned, stored, sent on a channel
// or converted to an interface declared outside nats.go whose method it
// implements with a raw send: "*nats.Conn flows into Publisher, whose
// Publish is raw (*nats.Conn).Publish ..."), and so is a generic function
// instantiated with one for a type parameter whose constraint has such a
// method. An interface with no send method (Flush, Close) is not
// reported, nor a type of your own that puts the shim behind it.
//
// Suggested fixes rewrite nc.Publish(s, d) to shim.Publish(nc, s, d),
// nc.PublishMsg(m) to shim.PublishMsg(nc, m) and m.Respond(d) to
// shim.Respond(m, d, nil), adding the shim import (or reusing it, or
// importing it as natsshim when the name shim is taken). No fix is offered
// where the rewrite would not be exact (a nats.Conn value rather than a
// pointer, a method value, RespondMsg).
//
// # Retried sends (retry)
//
// A send is a call of a raw send API, of a shim or claimcheck send
// (shim.Publish*, shim.Respond*, (*shim.Client).Request and RequestMsg,
// (*claimcheck.Store).PublishMsg, PublishJetStream and Prepare), or of a
// function known to send: one whose body, outside function literals, calls
// a send. Such functions are exported as facts, so wrappers in other
// packages count. nats.go's own functions are not analyzed (Connect,
// Subscribe, Flush, Ack, NextMsg are not sends), and neither are the shim
// and claimcheck packages: only their listed functions are sends. A call
// of a function literal that sends, of a local variable every value of
// which sends (a literal, a method value pub := nc.Publish, a sending
// function), counts too, and so does a call through an interface method or
// a function field whose receiver (a local variable, or an unexported
// field of the package) only ever holds values whose method of that name
// sends (a NATS value's send, a method known to send), or send method
// values (s.pub.Publish with s.pub only ever set to a *nats.Conn). A call
// through an interface of the user's own is also a send when every
// concrete type converted into that interface in the package (assigned,
// passed, returned, stored or sent as it) has a method of that name that
// sends: a framework's Transport whose implementations in the package
// wrap a *nats.Conn (return &natsTransport{nc: nc} from a function
// returning Transport); one implementation that does not send (a logging
// or HTTP one) makes the call no send.
//
// The rule. A send is reported when a failure path from it reaches the
// same operation again: the same body, to the same or another target, and
// no path on which the send may have worked reaches it with that body.
//
//   - The body is what is sent: for a send API, its payload or message
//     (the receiver, connection-like parameters, the subject, a reply's
//     request message, contexts, durations and publish options are the
//     target or the manner, not the body; a message's Header is not part
//     of it either); for any other function, every argument and the
//     receiver, because the analyzer cannot see what they mean. "The same
//     body to another target" is a retry: trying the next server, region
//     or subject with the same payload, the first may have run it. That
//     holds without a loop too: in a function with neither a loop nor
//     recursion, a send followed on its failure path by a later call of
//     the same function (or function variable) with the same body,
//     written the same and not changed on the way, is reported at the
//     first send (msg, err := primary.Request(subj, data, d); if err ==
//     nil { return msg, nil }; return backup.Request(subj, data, d)). A
//     call in between that can change the connection but not the body
//     (b.reconnect(), on the b of b.nc.Request, when the body is not read
//     from b) keeps it the same operation: reconnect, then re-send. The
//     same call after a success too is a fan-out, not a retry. In a
//     function with a loop, a first try before the loop is not reported
//     apart from the loop's send.
//   - The body is the same when no variable it depends on (directly or
//     through assignments in the function) changed on the way back: a
//     range loop's key and value, a variable incremented, assigned from
//     itself (queue = queue[1:]), from a channel receive, a method call or
//     a function called without arguments, or whose address is taken, and
//     whatever the send statement itself assigns (reply, err :=
//     Request(cursor); cursor = next(reply) is pagination) change; a
//     variable assigned again from unchanged inputs (data, _ :=
//     json.Marshal(o)) does not. A body that may differ on every
//     evaluation (send(<-ch)) is never the same.
//   - So a loop whose failure path moves on to another item is iteration,
//     whatever its success path does: for _, name := range names { err :=
//     op(name); if err == nil { t.Fatal(...) } } is not reported, nor is a
//     conformance loop that returns unless each case fails as expected.
//     A loop whose success path fails a test (t.Fatal, t.Error) or
//     returns a new error (return fmt.Errorf("%s: accepted", subj)) before
//     going round again checks that each send fails: not reported either,
//     even with one payload for every subject.
//   - A loop that sends the same body after a success too (a heartbeat,
//     a ticker) is a periodic send, not a retry. The paths on which the
//     send may have worked are its success paths and the paths that never
//     tested its outcome; a success path whose condition looked at the
//     reply (the call's first result, a pointer, a slice or a struct
//     alike; also in the condition that tests the error, err == nil &&
//     len(replies) == want; also through what was decoded from it,
//     resp, err := decode(reply.Data) then resp.Error != "" or err != nil)
//     before looping (a "busy" answer: the responder said it did not run
//     it) does not count, so a loop on both "busy" and a timeout is reported: the
//     timeout path sends again a request that may have run. A test counts
//     as an answer only when some outcome of it leaves the loop around the
//     send (return, break, a call that does not return, an assignment to
//     a variable of the loop's condition) before the loop goes round: when
//     every outcome goes round (a health check on a timer, if repaired {
//     n++ }; a load loop, if string(m.Data) != "ok" { bad++ }), the send
//     is periodic and not reported. A poll that asks again on an error
//     and on an answer it does not want yet (info, err :=
//     str.Information(); if err != nil { continue }; if info.Leader !=
//     old { break }) is reported: its error path sends again a request
//     that may have run, and the rule cannot see that a request only
//     reads. A reply coded as a timeout (a value read from the reply
//     compared with a constant whose name says Timeout, TimedOut or
//     DeadlineExceeded: resp.Code == CodeTimeout) is not a busy answer
//     but a failure whose outcome is unknown: a loop going round on it
//     retries.
//   - The success path may leave the loop by return, break, goto, or a
//     call that does not return: panic, os.Exit, runtime.Goexit, log.Fatal
//     and log.Panic, the Fatal, FailNow and Skip methods of testing, the
//     Fatal/Exit functions of klog, glog, zap, logrus and zerolog, and
//     functions inferred not to return (their body ends with such a call
//     and has no return statement; facts, where facts are inferred). The
//     list is in names.go, not x/tools ctrlflow facts (a CFG of every
//     function of every dependency: about 15% more CPU than the floor,
//     and blind to interface methods such as testing.TB.Fatal).
//   - Loop conditions over flags are decided on the path: a local bool
//     set to a constant (for !sent && tries < 3 { ...; sent = true }) ends
//     the loop on the path that set it. Counters are not evaluated.
//   - Re-sending because nothing came back is a retry: a reply tested
//     against nil stands for the error (msg, _ := nc.Request(...) looped
//     until msg != nil), and a receive after the send (sub.NextMsg,
//     jetstream Consumer.Next) whose failure loops back to the send judges
//     it: publish, NextMsg times out, publish again. A receive that fails
//     and then runs again judges anew: in a responder loop (NextMsg times
//     out, wait for the next request, answer it) the next answer is not a
//     retry of the last one.
//   - A send in a goroutine the function starts (go func() { resp, err :=
//     t.Call(ctx, req); ch <- result{resp, err} }()) whose outcome the
//     goroutine sends on a channel of the function (the call itself,
//     errc <- t.Send(m); its error variable; a struct literal holding it
//     in a field of type error) is judged where the function receives
//     from that channel (r := <-ch, err = <-errc, case r := <-ch: in a
//     select), the field (r.err) standing for the error: a loop that
//     starts the goroutine again after a failure received, or after a
//     select's other case stored an error in the variable (err =
//     ErrTimeout on time.After), retries the send. The body is the go
//     statement's arguments and what the literal captures from the
//     function, but the channel: a goroutine per item of a range loop is
//     iteration.
//   - The loop may be for, for range, for {} with continue, labelled
//     continue, goto, a loop conditioned on the error (for err != nil,
//     for errors.Is(err, X) && n < 3), a recursive call (the same body if
//     the parameters it depends on are passed unchanged), mutual recursion
//     through functions of the package, or a function that reschedules
//     itself on failure (time.AfterFunc(d, func() { s.send() })). The
//     check runs on the control-flow graph of each function (go/cfg) and
//     decomposes && and || itself.
//
// Error flow. The failure path is a path on which the tests of the send's
// error say it is not nil; they are read from err != nil and err == nil,
// errors.Is, errors.As and other predicates taking the error, switch on
// the error (case nil), type switches on it (case nil is a success, any
// other type a failure), bools holding such a test, shim.Classify(err)
// compared with or switched on the Outcome constants (also through a
// variable holding it), !shim.MayHaveRun(err), and err = wrap(err) or
// fmt.Errorf("...: %w", err) on a failure path (errors.Is still sees the
// send's error; fmt.Errorf without %w, errors.New and errors.Join do not
// keep it). Once the error variable is assigned anything else, later tests
// are not about this send.
//
// Errors that prove nothing happened. A repeat only on them is not a
// finding, wherever the test comes (first, after err != nil, or as a later
// switch case): nats.ErrNoResponders and jetstream.ErrNoStreamResponse
// (nobody received it), nats.ErrTooManyStalledMsgs and its jetstream
// twin (an async publish refused locally), nats.ErrMaxPayload, shim.ErrPayloadTooLarge,
// claimcheck.ErrTooLarge and jetstream.ErrStreamMessageExceedsMaximum
// (refused), claimcheck.ErrNotPublished and claimcheck.ErrClosed (nothing
// published), nats.ErrConnectionClosed from a (*nats.Conn) Publish,
// PublishMsg or PublishRequest (nats.go's publish returns it before
// writing anything; a request's may come after the request went out, so
// it proves nothing there), shim.Classify(err) == shim.OutcomeNotRun or
// shim.OutcomeRejected, and a jetstream.APIError or nats.APIError whose
// ErrorCode is one by which the stream refused the message: a failed
// expectation (wrong last sequence or last message ID, wrong stream:
// re-reading and publishing again is optimistic concurrency), the stream's
// or account's limits and store, a message over max_msg_size, a bad TTL.
// Codes are read from the comparison (apiErr.ErrorCode ==
// jetstream.JSErrCodeStreamWrongLastSequence), never from strings. An
// error predicate of the package (func isNoResponders(err error) bool {
// return errors.Is(err, nats.ErrNoResponders) }, one return statement) is
// read the same way, and exported as a fact for other packages. A call
// statement passing the error and such a sentinel (require.ErrorIs(t,
// err, nats.ErrNoResponders), a test helper that stops the test
// otherwise) counts as a test that the error is that one.
//
// Declined requests. A package-level error variable that the functions
// and literals of the package return, after their one send, only on paths
// where the send worked and its reply was read (claim := func() error {
// m, err := nc.Request(...); if err != nil { return err }; ...; if
// ack.Error.Code == 10077 { return errNoSlot }; ... }) is the responder's
// answer, like "busy": a loop that repeats only on it (if err != errNoSlot
// { return err }) is not a finding. Returned on any other path (after a
// timeout too), it is an error like any other. The analyzer trusts the
// code's reading of the reply.
//
// Message IDs. A JetStream publish whose message ID is the same on every
// attempt is not a finding: the stream de-duplicates it within its
// duplicate window. The ID may be set by jetstream.WithMsgID or nats.MsgId
// among the options, also in an options slice passed with opts... (its
// literal or an append), or as the Nats-Msg-Id header: in the message
// literal, with Header.Set or Header.Add, by indexing the header, or in a
// header map built first and assigned (Header: hdr, m.Header =
// nats.Header{...}), or by a function of the package that builds the
// message and sets its ID, called before the loop (msg := e.toMsg(subj)). The same means built from constants, parameters,
// package-level variables and variables not assigned on the retry path,
// through pure functions (fmt.Sprintf, strconv, crypto hashes such as
// sha256.Sum256, hex and base64 encodings, slicing). A fresh ID per
// attempt (a nuid, the attempt number) is still a retry; the Core NATS
// publish has no such protection, header or not.
//
// Operation IDs. A (*shim.Client).Request or RequestMsg whose
// shim.OperationID (among its call options, also in an options slice
// passed with opts...) is the same on every attempt is not a finding, in
// a loop or a retry helper: a responder that makes its effect conditional
// on the ID runs the operation once (the shim package documents that
// contract). The same rules of "the same" apply as for message IDs, so a
// fresh ID per attempt is still a retry, and so is a loop around a request
// without one, shim.Attempts or not, and an ID passed to a function of
// your own that is not a shim request. A single call with
// shim.OperationID and shim.Attempts is the shim's own retry and not
// reported; nor is shim.Retry, which runs its function again only while
// the error says it did not run. The retry message says what to use: a
// fixed shim.OperationID with Attempts for requests, which protects only
// when the responder de-duplicates by the ID (shim.OperationIDFrom in its
// handler; docs/checks.md#operation-ids shows that half), a message ID
// for JetStream, shim.Retry for the rest.
//
// Retry helpers. A send inside a function literal passed to a retry helper
// (directly, converted to the helper's function type, or through a
// variable) is reported when its failure makes the literal ask for another
// attempt; a named function that sends passed to one is reported at the
// helper call. [Config.RetryHelpers] lists them ([DefaultRetryHelpers]:
// cenkalti/backoff, avast/retry-go, sethvargo/go-retry, client-go retry,
// apimachinery wait), as importpath.Func or importpath.Type.Method
// (importpath.(Type).Method and importpath.(*Type).Method are accepted as
// the same). Their semantics are read from their arguments: backoff and
// retry-go retry any error not wrapped by backoff.Permanent or
// retry.Unrecoverable, unless a retry.RetryIf option's predicate is true
// only for errors that prove nothing happened; go-retry retries only
// errors wrapped by retry.RetryableError; client-go OnError retries what
// its predicate accepts (the same reading), and RetryOnConflict only
// Kubernetes conflict errors, which no NATS send returns, so it is not
// reported; a wait.Poll* or ExponentialBackoff condition polls again on
// (false, nil) and stops on an error, so a request whose error returns
// (false, nil) is reported, also when the success path answers from the
// reply (return r.Ready, nil; if string(msg.Data) == "ready" { return
// true, nil }; return false, nil: "not yet" is the responder's answer, as
// "busy" is in a loop). As in loops, a literal that asks
// for another attempt after a success too (return errors.New("not yet")
// once the send worked, until some other condition holds) repeats rather
// than retries and is not reported, and a send whose error the literal
// discards is not judged. Other configured helpers report every send
// inside whose error the literal does not discard.
//
// In-house helpers are found without configuration: a function that calls
// a parameter of function type returning an error, and whose failure path
// calls it again (the same rule as for sends), is a retry helper for its
// callers, in its package and in others through a fact, even when the
// helper's package imports no NATS code, if it is in the main module (see
// "What the analyzer cannot see"): withRetry(3, func() error {
// return nc.Publish(...) }) is reported. An integer argument of the
// function parameter (op(attempt)) is the attempt number, not another
// item: (pace.Steps).Until(ctx, func(attempt int) error { ... }) retries.
// A function passing its function
// parameter on to a retry helper at the retried position (checkFor(t, d,
// f) calling checkForErr(d, f)) is a retry helper too.
//
// Not reported either: a send in a go statement, or one whose error and
// reply are discarded.
//
// # Reconnect buffering (reconnectbuf)
//
// nats.Connect outside the shim packages is reported when its options do
// not include nats.ReconnectBufSize(-1) (or nats.NoReconnect()), or set a
// non-negative constant size (0 also means the 8 MiB default): while
// reconnecting, nats.go buffers outgoing messages and delivers a request
// after its caller already timed out. The message points to shim.Connect.
// Options are followed where they are built: a slice built in the
// function (opts := []nats.Option{...} or make([]nats.Option, 0, n);
// opts = append(opts, ...), also append(base, authOpts(cfg)...), and opts
// = setupConnOptions(opts) with a function of the package that appends to
// its parameter and returns it); a function or method of the package
// returning options (cfg.connectOptions(), optionsFrom(cfg)), judged by
// its return statements, and another package's through a fact; a field of
// option type (nats.Options, []nats.Option) of the package, judged by
// every store to it (s.natsOpts = nats.GetDefaultOptions() in a
// constructor, then opts := s.natsOpts; opts.Connect()), or, for a field
// only ever stored from one constructor's parameter and passed as a
// connect's only options (return &Client{opts: opts}, then
// nats.Connect(c.url, c.opts...)), at each call of the constructor, in
// other packages through a fact; and options a
// function takes as parameters and passes to a connect (func dial(url
// string, opts ...nats.Option)), judged at each call of that function with
// the caller's options ("call of dial connects without ..."), in other
// packages through a fact; a call of a function value (an unexported
// field or a variable) every value of which is such a function or a
// literal passing its options on (p.connect(addr, opts...) with p.connect
// set to func(url string, o ...nats.Option) { return nats.Connect(url,
// o...) }) is judged the same way. Function-literal options are read for
// assignments to ReconnectBufSize and AllowReconnect. (nats.Options).Connect
// is judged for a composite literal (one that allows reconnecting is
// reported), nats.GetDefaultOptions(), a field and a local variable
// initialized from them, taking later field assignments into account.
//
// Not judged, and not reported: a non-constant size, a slice changed by
// index or by an option on some paths only (if tls { opts = append(opts,
// ...) }), options from a function value, a pointer, a field that other
// packages may set (exported, of an exported type) or that is changed in
// place, and options from a parameter of an exported function (judged
// where it is called, in analyzed code). With [Config.Audit] each such
// connect is listed (category "unjudged") with why.
//
// # Receivers (receiver)
//
// Where claim checks are in use (the package imports claimcheck or calls
// shim.WithClaimChecks or shim.ServeClaimChecks; every package with
// [Config.ClaimChecks], flag -claim-checks, for a service that only
// receives what others claim-check), a receive path that reads a
// message's body without resolving claim checks is reported: a
// claim-checked message arrives with an empty body. Receive paths are the
// callbacks of (*nats.Conn).Subscribe and QueueSubscribe and of the
// legacy JetStream Subscribe forms, jetstream Consume, micro.HandlerFunc
// and micro.ContextHandler (a function literal, a function or method of
// the package, or a local variable assigned a literal once), and the
// messages a function receives from ChanSubscribe's channel, NextMsg,
// Fetch, jetstream Next and a Messages iterator. A body is read with what
// is derived from the message (assignments, range, receives) and the
// functions of the package it is passed to; it reads the message when it
// reads nats.Msg's Data field or calls Data on a jetstream.Msg or
// micro.Request, and it handles claim checks when it calls
// (*claimcheck.Store).Resolve, Open or ResolveJetStream,
// claimcheck.IsClaimCheck or shim.ResolveMicro, or names
// claimcheck.HeaderRef or HeaderSize. A shim handler is not a raw receive
// path. The suggested fix rewrites Subscribe, QueueSubscribe and Consume
// to the Store's helper, with an error handler that logs, when exactly one
// *claimcheck.Store is in scope and no options are passed. Migrate
// receivers first: one that resolves reads plain messages as before.
//
// # Handlers without their connection (handler)
//
// A shim.Handler, JSONHandler or StreamHandler built without the
// shim.Conn option is reported when every option given is a call of a
// shim function (options in a slice or a variable are not judged): its
// replies cannot use the connection's limit, and a StreamHandler answers
// every request with an error. The suggested fix adds shim.Conn(nc) when
// the handler is passed straight to nc.Subscribe or nc.QueueSubscribe.
//
// # What the analyzer cannot see
//
// It reads one function's control flow plus facts about the functions it
// calls. Not seen: a call through an interface, a function value or a type
// parameter whose concrete value is not visible (it is reported where a
// NATS value flows in, if that is in analyzed code; a value that comes
// from another package's exported field or function result is not
// followed), and a call through an interface whose sending implementation
// is converted into it only in another package (a transport/nats package
// returning client.Transport, wired up in main: facts flow only from a
// package to its importers; the conversion of the *nats.Conn into the
// interface, if any, is reported as a rawsend); sends through reflection,
// maps and channels of functions; a retry spread over goroutines other
// than the one shape above (a go statement starting a function literal of
// the function, the outcome sent on a local channel of the function and
// received there): a goroutine started by a named function or method (go
// c.call(ch, req)), a channel that is a field or a parameter, an outcome
// passed through a further goroutine, a worker pool or a scheduler other
// than time.AfterFunc; loop counters (for i := 0; i < 3 is read as "may loop");
// a function that does not return or a retry helper declared in another
// module's package that imports no nats.go, directly or not (an
// organisation's shared toolbox): facts are inferred only in packages
// that import nats.go and in those of the main module (a module without a
// version: the one being linted, or a workspace's), which is what
// cmd/natssend-lint loads from source, so that it and go vet, which
// analyzes every package, report the same (list such a helper in
// -retry-helpers);
// error predicates with more than one statement; what a wrapper's
// arguments mean (each is part of the body); a send inside a function
// literal that is only registered (a Subscribe handler) is not a send of
// the registering function, and a function that sends only through an
// interface whose value is known is not exported as a sender.
//
// # Reviewed exceptions (directive)
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
// statement with a reported finding: elsewhere it is prose. A directive is
// not called unused when the finding it covers is only hidden by the
// configuration: in a shim package, in a disabled category, or, for a
// "retry:" directive, on a send while the retry check is disabled. With
// [Config.SkipTests], nothing at all is reported in _test.go files,
// directive problems included.
//
// # Audit (reviewed)
//
// With [Config.Audit] (flag -audit), every finding suppressed by a
// directive is reported as a diagnostic of category "reviewed", whose
// message names the API, the categories suppressed and the reason (without
// a "retry:" prefix: the categories say it):
//
//	reviewed raw (*nats.Conn).Publish (rawsend): liveness probe, 2 bytes
//	reviewed raw (*nats.Conn).Request (rawsend, retry): idempotent upsert keyed by order ID
//
// It also lists each connect whose options the reconnectbuf check cannot
// judge, as a diagnostic of category "unjudged" saying why:
//
//	unjudged nats.Connect: a non-constant ReconnectBufSize
//
// # Flags
//
// -shim-packages, -retry-helpers and -categories take comma-separated
// lists; -skip-tests, -audit and -claim-checks are booleans. A list
// replaces the default (list the [DefaultRetryHelpers] entries you use
// with your own helper). An unknown category or a malformed entry is a
// flag error.
package analyzer
