package permsets

// pending lists the rows of TestPermissionSets that fail on main today,
// by role and the grant taken away (and TestBucketPerServiceIsolates),
// with what happens and what the runtime lacks. They are skipped until the runtime reports those
// denials; the list is emptied in one commit of its own.
var pending = map[string]string{
	// claimcheck: a failed upload's clean-up retries a denied purge until the caller's context ends.
	"orders-publisher/without publish $O.orders.M.>":    "PERMISSION_DENIED only at the step's deadline: the clean-up's purge is denied too and retried (claimcheck purgeUpload)",
	"orders-responder-cc/without publish $O.orders.M.>": "the reply upload's clean-up retries its denied purge until the call's deadline (claimcheck purgeUpload)",

	// claimcheck: a Core NATS publish and a subscription are not checked for a denial.
	"orders-publisher/without publish orders.events.>":         "silent success: Store.PublishMsg returns nil, the server dropped the message (no round trip under WatchDenied)",
	"orders-resolver/without subscribe orders.events.>":        "silent: Store.Subscribe returns a subscription the server refused; nothing is delivered",
	"orders-resolver-delete/without subscribe orders.events.>": "silent: Store.Subscribe returns a subscription the server refused; nothing is delivered",

	// claimcheck: reads (direct gets, the leader's get) are not watched for denials.
	"orders-resolver/without publish $JS.API.DIRECT.GET.OBJ_orders":                      "the read waits for its bound (2 min without a deadline): batched direct get denied, not watched",
	"orders-resolver/without publish $JS.API.DIRECT.GET.OBJ_orders.$O.orders.M.>":        "the read waits for its bound: the meta data's direct get denied, not watched",
	"orders-resolver/without publish $JS.API.STREAM.MSG.GET.OBJ_orders":                  "a deleted payload's Resolve times out instead of ErrMissing or PERMISSION_DENIED: the leader's get denied, not watched",
	"orders-resolver-delete/without publish $JS.API.DIRECT.GET.OBJ_orders":               "the read waits for its bound: batched direct get denied, not watched",
	"orders-resolver-delete/without publish $JS.API.DIRECT.GET.OBJ_orders.$O.orders.M.>": "the read waits for its bound: the meta data's direct get denied, not watched",
	"orders-resolver-delete/without publish $JS.API.STREAM.MSG.GET.OBJ_orders":           "a deleted payload's Resolve times out: the leader's get denied, not watched",
	"orders-resolver-delete/without publish $JS.API.STREAM.PURGE.OBJ_orders":             "DeleteAfterRead's purge denied, retried for the clean-up's 10 s; onErr not called within the step",
	"orders-caller-cc/without publish $JS.API.DIRECT.GET.OBJ_orders":                     "REPLY_LOST at the deadline (the reply's read timed out), not PERMISSION_DENIED",
	"orders-caller-cc/without publish $JS.API.DIRECT.GET.OBJ_orders.$O.orders.M.>":       "REPLY_LOST after 20 s: the read's deadline, then Discard's own 10 s",
	"orders-caller-cc/without publish $JS.API.STREAM.MSG.GET.OBJ_orders":                 "REPLY_LOST (timed out) for a reply that is gone, at the deadline",
	"orders-caller-cc/without publish $JS.API.STREAM.PURGE.OBJ_orders":                   "silent: the call succeeds and both payloads stay in the bucket (Discard's error is ignored)",
	"orders-responder-cc/without publish $JS.API.DIRECT.GET.OBJ_orders":                  "the claim-checked request's read waits for the call's deadline",
	"orders-responder-cc/without publish $JS.API.DIRECT.GET.OBJ_orders.$O.orders.M.>":    "CLAIM_CHECK_UNRESOLVED (timed out) at the call's deadline",
	"orders-responder-cc/without publish $JS.API.STREAM.MSG.GET.OBJ_orders":              "a request whose payload is gone is reported only at the call's deadline",

	// TestBucketPerServiceIsolates: the same unwatched read.
	"isolation/another service's bucket": "the read of a bucket the user may not read waits for its deadline: direct get denied, not watched",

	// shim: requests, replies, subscriptions and streams are not watched for denials (the lead's change).
	"orders-caller/without publish orders.rpc.>":             "DEADLINE_EXCEEDED (outcome unknown) for a request the server dropped",
	"orders-caller/without subscribe _INBOX.>":               "DEADLINE_EXCEEDED: the reply inbox's subscription was refused",
	"orders-caller-cc/without publish orders.rpc.>":          "DEADLINE_EXCEEDED for a request the server dropped",
	"orders-responder/without subscribe orders.rpc.>":        "shim.Serve returns nil for a refused subscription; callers get NO_RESPONDERS",
	"orders-responder-cc/without subscribe orders.rpc.>":     "shim.Serve returns nil for a refused subscription; callers get NO_RESPONDERS",
	"orders-responder/without allow_responses":               "the reply is dropped: OnError is never called, the caller waits for its deadline",
	"orders-responder-cc/without allow_responses":            "the reply is dropped: OnError is never called, the caller waits for its deadline",
	"orders-stream-caller/without publish orders.rpc.>":      "DEADLINE_EXCEEDED for a stream request the server dropped",
	"orders-stream-caller/without subscribe _INBOX.>":        "DEADLINE_EXCEEDED: the frames' inbox subscription was refused",
	"orders-stream-caller/without publish _INBOX.>":          "the caller's credit is dropped: the stream fails at its deadline",
	"orders-stream-responder/without subscribe orders.rpc.>": "shim.Serve returns nil for a refused subscription; callers get NO_RESPONDERS",
	"orders-stream-responder/without allow_responses":        "the frames are dropped: OnError gets CANCELED (caller gone) after the idle bound",
	"orders-stream-responder/without subscribe _INBOX.>":     "the control inbox's subscription was refused: OnError gets CANCELED after the idle bound",
}
