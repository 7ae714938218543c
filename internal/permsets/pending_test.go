package permsets

// pending lists rows of TestPermissionSets (by role and the grant taken
// away: "orders-caller/without publish orders.rpc.>") and of
// TestBucketPerServiceIsolates ("isolation/another service's bucket")
// that are skipped, with the reason. A row the runtime cannot satisfy yet
// goes here with what it lacks, never silently.
var pending = map[string]string{
	// The stream protocol needs the caller to publish credits and the end
	// acknowledgement to the responder's inbox, and the responder to send
	// frames beyond allow_responses' one reply: a protocol whose controls
	// stay in the service's namespace is not built yet (issue 34).
	"orders-stream-caller/without publish _INBOX.>":      "the caller's credit is dropped: the stream fails at its idle bound, not at once",
	"orders-stream-responder/without allow_responses":    "the frames are dropped: OnError gets CANCELED (caller gone) after the idle bound",
	"orders-stream-responder/without subscribe _INBOX.>": "the control inbox's subscription was refused: OnError gets CANCELED after the idle bound",
	// A call that succeeded keeps its result when deleting its payloads
	// afterwards is refused: they stay until the bucket's TTL. How such a
	// failed clean-up is reported (not as the call's error) is not decided.
	"orders-caller-cc/without publish $JS.API.STREAM.PURGE.OBJ_orders": "silent: the call succeeds and both payloads stay in the bucket until its TTL",
}
