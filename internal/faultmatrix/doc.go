// Package faultmatrix holds natssend's fault matrix: a table-driven test
// (in this package's _test files; the package itself has no code) that
// drives every send path of package shim and package claimcheck exactly as
// a user does, through a natstest.Proxy in front of a real server, and
// injects one fault per row at an exact protocol point:
//
//   - the context cancelled or its deadline passed before the send, during
//     the request's (or message's) upload, while waiting for the reply,
//     during the reply's upload and during the reply's download;
//   - a server restart at each of those phases;
//   - the caller's or the responder's connection cut;
//   - the responder crashing (its connection closed without a reply);
//   - on a 3-node cluster, the stream leader lost;
//   - on the claim-check read path (direct gets): the object deleted, the
//     reader cancelled at the meta data's lookup, at the request for
//     chunks, during the download and between Reads, chunk replies lost,
//     and sizes forged in the meta data (TestReadPath,
//     TestReadForgedSizes, TestClusterReadLeaderLoss).
//
// The send paths are Publish and PublishMsgContext (fits; over the limit,
// refused with nothing stored), Client.Request and RequestMsg (small, claim-checked request,
// claim-checked reply), Attempts with and without an OperationID, Retry,
// Handler and JSONHandler replies, and claimcheck.Store's PublishMsg,
// PublishJetStream, Resolve and Open; transfer streams
// (Client.RequestStream and RequestMsgStream against a StreamHandler:
// frames lost, changed or cut at an exact frame of the frame protocol),
// scatter-gather (Client.RequestMany), a micro endpoint with ResolveMicro
// and RespondMicroClaimCheck, and claimcheck.Store's Subscribe,
// QueueSubscribe, Consume and Messages.
//
// Every row states what the documentation promises: the Classify outcome,
// the error's identity (errors.Is), the *shim.Error's Sent field, how many
// times the handler ran (0 or 1 without an operation ID), and what is
// left in the claim-check bucket once the responder is done (nothing,
// except after a responder crash, until the bucket's TTL).
//
// The hostile peer is a dimension of its own: in TestStreamHostileResponder
// and TestStreamHostileCaller a raw nats.go peer speaks the stream protocol
// by hand (natstest.StreamFrame, RawServe) to the natssend side: forged,
// duplicate, overlapping and out-of-window frames of every kind, ends and
// error frames inconsistent with what was delivered, credit beyond the
// declared window, no final acknowledgement, control garbage, silence;
// TestStreamConcurrentWriters shares one StreamWriter among sixteen
// goroutines. Those rows also state the time within which the error
// surfaces, that the heap (after GC) grew by at most the window plus a
// few MiB, and that goroutines and subscriptions come back to their
// baseline; they run one at a time, outside the parallel groups.
//
// Two columns cross every send path (request, Attempts, RequestMany, both
// sides of a stream, claim-checked requests and replies, Store publish,
// read and delete): the permission column (TestPermissionColumn: the
// server denies the publish, the reply subscription or the bucket's API
// the path needs; the row states the code, the Classify outcome, that it
// comes at once unless nats-server tells only the other side, and what is
// left in the bucket) and the hostile-peer column (TestHostilePeerColumn:
// a user of the same account with ordinary credentials forges or repeats
// replies, references, frames and headers, or plants objects). Rows marked
// "(can)" state what such a peer can do and docs/security.md says why.
// TestMatrixCoverage keeps the matrix whole: every exported function of
// shim and claimcheck is on a send path (or sends nothing), and every send
// path has fault, hostile-peer and permission rows (or cited tests). A row
// that waits for a fix of issue 42 is skipped ("pending issue 42: ...";
// NATSSEND_MATRIX_PENDING=1 runs it), one that fails for another known
// bug too ("BUG: ..."; NATSSEND_MATRIX_BUGS=1).
//
// make faults runs the matrix several times with the race detector.
package faultmatrix
