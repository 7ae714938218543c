// Package analyzer defines the natssend analysis pass (go/analysis). This
// comment is the analyzer's one documentation source: its "Analyzer
// natssend" section is the Analyzer's Doc, and docs/checks.md, which
// diagnostics link to, follows it section by section.
//
// Use [Analyzer] with a driver (cmd/natssend-lint, go vet -vettool, go fix
// -fixtool), or [New] with a [Config] (the golangci-lint plugin does).
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
// path, receiver type name and method name of the resolved *types.Func
// (promoted and inherited methods resolve to the declaring one), so a
// look-alike is never mistaken for it. Every name matched by string is in
// names.go, sendnames.go and receivenames.go; a test checks them against
// the real packages.
//
// # Raw sends (rawsend)
//
// Reported outside the shim packages ([Config.ShimPackages]): the
// (*nats.Conn) Publish, PublishMsg, PublishRequest and Request* methods;
// (*nats.Msg) Respond and RespondMsg; the JetStream publishes of
// nats.JetStream (also through nats.JetStreamContext) and
// jetstream.Publisher (also through jetstream.JetStream); micro.Request
// Respond, RespondJSON and Error; the (*nats.EncodedConn) sends; and the
// JetStream KeyValue writes Put, PutString, Create and Update (of
// jetstream.KeyValue and nats.KeyValue), publishes to the bucket's
// stream: a value above max_payload is refused, and no claim check can
// stand in for one (readers Get the value itself), so keep values under
// the limit or store a large one in an object store and put its name.
// Calls are reported wherever they are (go and defer statements,
// function literals, generic code), and so are method values (f :=
// nc.Publish) and method expressions ((*nats.Conn).Publish).
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
// shim.Respond(m, d, nil), importing the shim (as natsshim when the name
// is taken); none where the rewrite would not be exact (a nats.Conn
// value, a method value, RespondMsg).
//
// # Retried sends (retry)
//
// A send is a call of a raw send API, of a shim or claimcheck send
// (shim.Publish*, shim.Respond*, (*shim.Client).Request and RequestMsg,
// (*claimcheck.Store).PublishMsg, PublishJetStream and Prepare), or of a
// function whose body, outside function literals, calls a send (a fact, so
// wrappers in other packages count). nats.go's own functions (Connect,
// Subscribe, Flush, Ack, NextMsg) and the shim and claimcheck packages are
// not analyzed: only their listed functions are sends. A call of a sending
// function literal or of a local variable every value of which sends (pub
// := nc.Publish) counts too, and so does a call through an interface
// method or function field whose receiver (a local, or an unexported field
// of the package) only ever holds values whose method of that name sends
// (s.pub.Publish with s.pub only ever a *nats.Conn), or through an
// interface of the user's own every concrete type converted into which in
// the package has a sending method of that name (a Transport whose
// implementations wrap a *nats.Conn); one that does not send (a logging
// or HTTP one) makes the call no send.
//
// Interfaces implemented elsewhere. A call of a method (its last result an
// error) of an interface of the main module that a loop or recursion
// retries by this rule, with no sending implementation in sight, is listed
// in a package fact, also in a package that imports no NATS code. A
// package importing that one directly which converts a type whose method
// of that name sends into the interface reports the conversion, where the
// retried send is chosen: "*natspub.JetStream flows into events.Publisher;
// (*outbox.Relay).Deliver retries its Publish on failure at outbox.go:37"
// (the command wiring both, a plugin registering itself). A "retry:"
// directive on the retried call covers it.
//
// The rule. A send is reported when a failure path from it reaches the
// same operation again: the same body, to the same or another target, and
// no path on which the send may have worked reaches it with that body.
//
//   - The body is what is sent: for a send API, its payload or message
//     (not the receiver, connection-like parameters, the subject, a
//     reply's request, contexts, durations, publish options or Header);
//     for any other function, every argument and the receiver. The same
//     body to another target (the next server, region or subject) is a
//     retry: the first may have run it. That holds without a loop too: a
//     send followed on its failure path by a later call of the same
//     function with the same body, unchanged on the way, is reported at
//     the first (primary.Request, then on error backup.Request), also with
//     a call in between that can change the connection but not the body
//     (b.reconnect(), also after nc := b.nc; nc.Request). The same call
//     after a success too is a fan-out; in a function with a loop, a first
//     try before it is not reported apart.
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
//     a ticker) is periodic, not a retry. The paths on which the send may
//     have worked are its success paths and those that never tested its
//     outcome; a success path whose condition looked at the reply (its
//     first result, also with the error test, err == nil && len(replies)
//     == want, or through what was decoded from it) before looping, a
//     "busy" answer, does not count, so a loop on both "busy" and a
//     timeout is reported. A test counts as an answer only when some
//     outcome of it leaves the loop (return, break, a call that does not
//     return, a change of the loop's condition) before it goes round: when
//     every outcome goes round (a health check on a timer, a load loop
//     counting bad replies) the send is periodic. A poll that asks again
//     on an error and on an answer it does not want yet (leader not
//     changed) is reported: its error path may re-run a request, and the
//     rule cannot see that it only reads. A reply coded as a timeout
//     (resp.Code == CodeTimeout: a constant named Timeout, TimedOut or
//     DeadlineExceeded) is an unknown outcome, not a busy answer.
//   - The success path may leave the loop by return, break, goto, or a
//     call that does not return: panic, os.Exit, runtime.Goexit, log.Fatal
//     and log.Panic, the Fatal, FailNow and Skip methods of testing, the
//     Fatal/Exit functions of klog, glog, zap, logrus and zerolog, and
//     functions inferred not to return (their body ends with such a call
//     and has no return statement; facts, where facts are inferred). The
//     list is in names.go, not x/tools ctrlflow facts (about 15% more CPU).
//   - Loop conditions over flags are decided on the path: a local bool
//     set to a constant (for !sent && tries < 3 { ...; sent = true }) ends
//     the loop on the path that set it. Counters are not evaluated.
//   - Re-sending because nothing came back is a retry: a reply tested
//     against nil stands for the error (msg, _ := nc.Request(...) looped
//     until msg != nil), and a receive or flush after the send
//     (sub.NextMsg, jetstream Consumer.Next, nc.Flush, FlushTimeout,
//     FlushWithContext) whose failure loops back to the send judges it:
//     publish, the flush fails, publish again. A receive that fails and
//     runs again judges anew: in a responder loop the next answer is not a
//     retry of the last one. So does a select waiting for a channel the
//     package's own subscription feeds (sent to or closed in a callback,
//     given to ChanSubscribe, or fed by a goroutine reading either) whose
//     timer case (time.After, a *time.Timer's C; a ticker's is a period)
//     goes round to the same send: the ack may be lost, not the frame
//     ("sent again when the timer at line N fires before its
//     acknowledgement"; a retry: directive reviews it when sequence
//     numbers make duplicates harmless). Beside a stop channel no
//     subscription feeds, the timer is a period.
//   - A send in a goroutine the function starts (go func() { resp, err :=
//     t.Call(ctx, req); ch <- result{resp, err} }()) whose outcome (the
//     call, its error, a struct holding it in an error field) goes on a
//     channel of the function is judged where the function receives it
//     (r := <-ch, err = <-errc, a select case), r.err standing for the
//     error: starting the goroutine again after a failure received, or
//     after a select's other case stored an error (err = ErrTimeout on
//     time.After), retries. The body is the go statement's arguments and
//     what the literal captures, but the channel: a goroutine per item of
//     a range loop is iteration.
//   - The loop may be for, for range, for {} with continue, labelled
//     continue (also restarting a range over an unchanged batch from its
//     first item: the failed item is sent again), goto, a loop on the
//     error (for err != nil), a recursive call (the same body if its
//     parameters are passed unchanged), mutual recursion through functions
//     of the package (send(m) to recover(m, err) to send(m) again: passed
//     on unchanged too), or a function that reschedules itself on failure
//     (time.AfterFunc). The check runs on each function's control-flow
//     graph (go/cfg) and decomposes && and || itself.
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
// finding, wherever the test comes: nats.ErrNoResponders and
// jetstream.ErrNoStreamResponse (nobody received it),
// nats.ErrTooManyStalledMsgs and its jetstream twin (refused locally),
// nats.ErrMaxPayload, shim.ErrPayloadTooLarge, claimcheck.ErrTooLarge and
// jetstream.ErrStreamMessageExceedsMaximum (refused),
// claimcheck.ErrNotPublished and ErrClosed, nats.ErrConnectionClosed from
// a (*nats.Conn) Publish, PublishMsg or PublishRequest or a
// (*nats.EncodedConn) Publish or PublishRequest (returned before anything
// is written; a request's proves nothing), shim.Classify(err) ==
// shim.OutcomeNotRun or OutcomeRejected, and a jetstream.APIError or
// nats.APIError whose ErrorCode (read from the comparison, never from
// strings) says the stream refused the message: a failed expectation
// (optimistic concurrency), the stream's or account's limits and store,
// max_msg_size, a bad TTL. An error predicate of the package (one return
// statement: return errors.Is(err, nats.ErrNoResponders)) is read the same
// way and exported as a fact, and a call statement passing the error and
// such a sentinel (require.ErrorIs(t, err, nats.ErrNoResponders)) counts
// as a test that the error is that one.
//
// Declined requests. A package-level error variable that the package's
// functions and literals return, after their one send, only where it
// worked and its reply was read (if ack.Error.Code == 10077 { return
// errNoSlot }) is the responder's answer, like "busy": a loop repeating
// only on it is not a finding. Returned on any other path, it is an error.
//
// KeyValue. A retried Put or PutString is a retry (a repeat writes another
// revision); Create and Update are not (the bucket refuses the repeat of
// one that was stored: the key exists, the revision moved on), and they
// make no wrapper a sender.
//
// Message IDs. A JetStream publish whose message ID is the same on every
// attempt is not a finding: the stream de-duplicates it. The ID may be set
// by jetstream.WithMsgID or nats.MsgId among the options (also in opts...),
// or as the Nats-Msg-Id header (in the literal, by Header.Set, Add or
// indexing, a header map assigned whole, or a function of the package
// building the message before the loop), made through pure functions
// (fmt.Sprintf, strconv, hashes, hex, base64, slicing) from constants,
// parameters, package-level variables and variables not assigned on the
// retry path. A fresh ID per attempt (a nuid, the attempt number) is still
// a retry; Core NATS has no such protection.
//
// Operation IDs. A (*shim.Client).Request or RequestMsg with a
// shim.OperationID that is the same on every attempt (the same rules) is
// not a finding, in a loop or a retry helper: a responder keyed on the ID
// runs it once. Without one, a loop around a request is a retry, with
// shim.Attempts or not; one call with OperationID and Attempts is the
// shim's own retry, and shim.Retry repeats only while the error says it
// did not run. The message advises OperationID with Attempts for requests
// (docs/checks.md#operation-ids), a message ID for JetStream (also for a
// function that sends a request and a JetStream publish: a stream lookup,
// then the publish), shim.Retry for the rest. A retrying function literal
// is named by its line and enclosing function.
//
// Retry helpers. A send in a function literal passed to a retry helper
// (directly, converted to its function type, or through a variable) is
// reported when its failure makes the literal ask for another attempt; a
// named sending function passed to one is reported at the helper call.
// [Config.RetryHelpers] lists them ([DefaultRetryHelpers]: cenkalti/backoff,
// avast/retry-go, sethvargo/go-retry, client-go retry, apimachinery wait)
// as importpath.Func or importpath.Type.Method (also spelt
// importpath.(*Type).Method). Their semantics come from their arguments:
// backoff and retry-go retry any error not wrapped by backoff.Permanent or
// retry.Unrecoverable, unless a retry.RetryIf predicate is true only for
// errors that prove nothing happened; go-retry retries only
// retry.RetryableError; client-go OnError retries what its predicate
// accepts, RetryOnConflict only Kubernetes conflicts (never a NATS error:
// not reported); a wait.Poll* or ExponentialBackoff condition polls again
// on (false, nil), so a request whose error returns (false, nil) is
// reported, also when the success path answers from the reply ("not yet"
// is the responder's answer, as "busy" is in a loop). As in loops, a
// literal that asks again after a success too repeats rather than retries,
// and a send whose error the literal discards is not judged. Other
// configured helpers report every send whose error the literal keeps.
//
// In-house helpers are found without configuration: a function that calls
// a parameter of function type returning an error, and whose failure path
// calls it again (the same rule as for sends), is a retry helper for its
// callers, in its package and in others through a fact, even when its
// package imports no NATS code, if it is in the main module:
// withRetry(3, func() error { return nc.Publish(...) }) is reported. An
// integer argument of the function parameter (op(attempt)) is the attempt
// number, not another item. A function passing its function parameter on
// to a retry helper at the retried position (checkFor(t, d, f) calling
// checkForErr(d, f)) is a retry helper too. Not reported either: a send in
// a go statement, or one whose error and reply are discarded.
package analyzer

// The package comment continues in doc_rest.go (go doc joins the two).
