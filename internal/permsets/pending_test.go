package permsets

// pending lists rows of TestPermissionSets (by role and the grant taken
// away: "orders-caller/without publish orders.rpc.>") and of
// TestBucketPerServiceIsolates ("isolation/another service's bucket")
// that are skipped, with the reason. A row the runtime cannot satisfy yet
// goes here with what it lacks, never silently.
var pending = map[string]string{
	// A call that succeeded keeps its result when deleting its payloads
	// afterwards is refused: they stay until the bucket's TTL. How such a
	// failed clean-up is reported (not as the call's error) is not decided.
	"orders-caller-cc/without publish $JS.API.STREAM.PURGE.OBJ_orders": "silent: the call succeeds and both payloads stay in the bucket until its TTL",
}
