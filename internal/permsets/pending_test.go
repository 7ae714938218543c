package permsets

// pending lists rows of TestPermissionSets (by role and the grant taken
// away: "orders-caller/without publish orders.rpc.>") and of
// TestBucketPerServiceIsolates ("isolation/another service's bucket")
// that are skipped, with the reason. It is empty: every row runs. A row
// the runtime cannot satisfy goes here with what it lacks, never silently.
var pending = map[string]string{}
