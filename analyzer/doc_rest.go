// Package analyzer, continued from doc.go (go doc joins the two; the
// Analyzer's Doc and natssend-lint help leave this paragraph out):
//
// # Reconnect buffering (reconnectbuf)
//
// nats.Connect outside the shim packages is reported when its options do
// not include nats.ReconnectBufSize(-1) (or nats.NoReconnect()), or set a
// non-negative constant size (0 also means 8 MiB): while reconnecting,
// nats.go buffers outgoing messages and delivers a request after its
// caller timed out. Options are followed where they are built: a slice
// (a literal or make, then append; append(base, authOpts(cfg)...); opts =
// setupConnOptions(opts) with a helper of the package that appends and
// returns); a function returning options, by its returns (another
// package's by a fact); a field of option type of the package, by every
// store to it, or, when one constructor stores it from its parameter and
// nothing around it at a connect sets the buffer (return &Client{opts:
// opts}, then nats.Connect(c.url, c.opts...); nack's pool), at each call
// of the constructor. Function-literal options are read for assignments to
// ReconnectBufSize and AllowReconnect; (nats.Options).Connect is judged
// for a literal, nats.GetDefaultOptions(), a field or a local from them,
// with later field assignments (a change in place of another field than
// ReconnectBufSize or AllowReconnect, its URL, is ignored). Not judged: a
// non-constant size, a slice changed by index or by an option on some
// paths only, options from a function value, a pointer, a field other
// packages may set or whose buffer is changed in place; with
// [Config.Audit] each is listed as "unjudged", with why and where to look
// ("field opts's ReconnectBufSize is changed in place at client.go:23 in
// (*Client).SetBuffer", "exported field Bus.Opts, which other packages
// may set").
//
// Options from the caller are judged at each call in analyzed code (other
// packages' through a fact), reported as "call of dial connects without
// ...": a parameter of options (dial(url string, opts ...nats.Option)),
// also read in a function literal (testkube's retried connect) or via a
// function value whose every value so connects; a nats.Options or
// *nats.Options parameter only read (graft's NewNatsRpc), given &o,
// &nats.Options{...} or a pointer local used only for its fields; an
// option field of a struct parameter left unchanged (watermill-nats'
// NewPublisher(config)), given a literal (no such field: no options) or a
// local built from one, also by address to one constructor after another; functional options applied in turn to a struct
// whose unexported option field one adder's literal alone appends to
// (orbit.go ntf-client's WithConnectOptions), given calls of the package:
// the adder's add its arguments, others that cannot reach the field none.
// With [Config.Audit] an exported function's (or constructor's) connect is
// listed, not a finding: "delegated nats.Connect to the calls of exported
// Dial: its options come from parameter opts"; unjudged if its calls are
// not followed (another of its connects stands for them; a method of an
// unexported type).
//
// # Receivers (receiver)
//
// Where claim checks are in use (the package imports claimcheck or calls
// shim.WithClaimChecks or ServeClaimChecks; every package with
// [Config.ClaimChecks], flag -claim-checks), a receive path that reads a
// message's body without resolving claim checks is reported: a
// claim-checked message arrives with an empty body. Receive paths are the
// callbacks of (*nats.Conn).Subscribe and QueueSubscribe, the legacy
// JetStream Subscribe forms, jetstream Consume, micro.HandlerFunc and
// micro.ContextHandler (a literal, a function of the package, a local
// variable: each value assigned to it, as a handler wrapped for concurrent
// delivery; a call of a function of the package every return of which is
// a literal, s.ServeMsg(nc)), and the messages a function gets from ChanSubscribe, NextMsg
// and Fetch on a subscription it made, jetstream Fetch, Next and a
// Messages iterator. What is derived from the message, the functions of
// the package it is passed to, and where the package receives it from a
// channel (the channel of ChanSubscribe a field, read in another method;
// a callback handing it on) are read too. What the check cannot follow is
// listed with [Config.Audit] as "unjudged", naming it: a callback in a
// field or a parameter, made by a call or of another package, a message
// handed to a function value or an interface method, a channel that
// leaves the function unread. Reading
// is nats.Msg's Data or Data() of jetstream.Msg or micro.Request; handling
// is (*claimcheck.Store).Resolve, Open or ResolveJetStream,
// claimcheck.IsClaimCheck, shim.ResolveMicro or claimcheck.HeaderRef.
// Subjects no claim check is sent to are left alone: server subjects ("$"),
// inboxes made in the package (also inbox+".*" or via fmt.Sprintf). The
// suggested fix rewrites Subscribe, QueueSubscribe and Consume to the
// Store's helper, with an error handler that logs, when exactly one
// *claimcheck.Store is in scope. Migrate receivers first.
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
// parameter whose concrete value is not visible (reported where a NATS
// value flows in, if in analyzed code; another package's exported field or
// function result is not followed), including an interface whose sending
// implementation is converted into it only in a package that does not
// import the retrying one directly (go vet passes package facts on only to
// direct importers; a constructor returning the interface);
// sends through reflection, maps and channels of functions; a retry spread
// over goroutines in other shapes than the one above (go c.call(ch, req),
// a channel that is a field or a parameter, a worker pool, a scheduler
// other than time.AfterFunc); loop counters (for i := 0; i < 3 may loop);
// facts of a main-module package without nats.go whose every file is
// generated code (a "Code generated ... DO NOT EDIT." line: sqlc,
// oapi-codegen; none are inferred, and cmd/natssend-lint reads it from
// export data unless it is named); a function that does not return or a
// retry helper in another module's package that imports no nats.go
// (facts are inferred only in packages that import nats.go and in the
// main module's, which cmd/natssend-lint loads from source, so that it
// and go vet report the same; list such a helper in -retry-helpers); error predicates of more than one statement;
// what a wrapper's arguments mean (each is part of the body). A send in a
// function literal that is only registered (a Subscribe handler) is not a
// send of the registering function, and a function that sends only
// through an interface whose value is known is not exported as a sender.
//
// # Reviewed exceptions (directive)
//
// A statement carrying //natssend:reviewed <reason> on one of its lines,
// or on its own line right above it (possibly heading a block of
// comments), is not reported for raw sends and connections. A retry is
// another decision than a size or a connection setting: only a directive
// whose reason starts with "retry:" covers it (and the statement's other
// findings):
//
//	//natssend:reviewed retry: idempotent upsert keyed by order ID
//
// A retry on a statement with a plain directive says so in its message. A
// call spanning several lines is one statement; for if, for and switch only
// the header counts, and a function literal's lines are its own
// statements. Text after a further " //" is a comment, not the reason.
//
// The directive is itself checked (category "directive", always enabled):
// one without a reason (also "retry:" alone; it still suppresses), a
// malformed one (an unknown //natssend: name; the spaced "//
// natssend:reviewed" only on a statement with a finding, elsewhere it is
// prose) and an unused one (a plain directive whose statement's only
// finding is a retry, with a hint) are reported; one whose finding is only
// hidden by the configuration (a shim package, a disabled category) is not
// unused. With [Config.SkipTests] nothing is reported in _test.go files.
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
// It also lists the "unjudged" and "delegated" connects and the receive
// paths the receiver check cannot follow ("unjudged"), above: entries, not
// findings (natssend-lint's exit status ignores them).
//
// # Flags
//
// -shim-packages, -retry-helpers and -categories take comma-separated
// lists, each replacing its default; -skip-tests, -audit and -claim-checks
// are booleans. An unknown category or a malformed entry is an error.
package analyzer
