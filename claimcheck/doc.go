// Package claimcheck sends messages above the broker's size limit as claim
// checks: the payload goes into a JetStream object store and the message
// travels with an empty body and headers that say where the payload is:
// HeaderRef (the object's name), HeaderSize (the payload's size in bytes),
// HeaderBucket (the bucket) and, for a Store in a JetStream domain,
// HeaderDomain. Receivers get the payload back whole and unchanged. A
// message that fits is sent as it is. Claim checks are made only through
// a Store the service set up: package shim's Publish functions refuse a
// message over the limit instead.
//
// A reference without HeaderBucket or HeaderDomain (made before they
// existed) means the reading Store's own bucket and domain. A reference
// naming another bucket is read from that bucket (direct gets of its
// stream). A reference of another domain is read only by a Store that
// names that domain with WithDomains, through that domain's JetStream API
// ($JS.<domain>.API.DIRECT.GET...); any other is refused with
// ErrForeignDomain before anything is read. Object store
// subjects ($O.<bucket>.>) carry no domain, so across a leafnode a
// same-named bucket of the other domain could store an upload's messages
// too: an upload counts only when the Store's own stream in its own
// domain acknowledges it, and the leafnode's permissions should keep $O.>
// inside each domain (deny it in the remote's export and import).
//
// # Deciding what fits
//
// Every publish first checks its input (subject, reply subject, header
// keys, reserved headers, reserve) and refuses what nats.go would refuse,
// before anything is stored. It then makes one decision (fits, claim
// check, or refuse: internal/connlimit's Decide) against the connection's
// one limit state, which the Store shares with package shim's Publish,
// Client and reply helpers on the same connection. A message fits when its
// header block plus body, plus whatever the sender still adds, is at most
// the connection's effective max_payload (the minimum of server, account
// and user limits), exactly as the server counts (internal/wire). For
// PublishJetStream the headers the PublishOpts add are computed by nats.go
// itself (a dry run of jetstream's PublishMsg on a copy that stops before
// anything is written), and the target stream's max_msg_size counts when
// it is lower; if the stream still refuses the message as too large
// (nothing stored), the decision is made again.
//
// On a connection made by shim.Connect no publish of a Store, chunk
// uploads included, can get the connection closed for its size: nats.go's
// own check, atomic with the write, never holds a limit above the
// connection's (see package shim's Connect). When nats.go refuses a
// message because the connection reconnected to a link with a lower limit
// between the decision and the send (nothing was written), the Store
// decides again with the new limit. On other connections the limit is
// confirmed by a round trip after each reconnect, which leaves a moment
// right after a reconnect in which a message can still reach the server
// with the stale limit; use shim.Connect.
//
// Invalid option values (WithTTL(0), NakDelay(-1), ...) are errors
// wrapping ErrInvalidOption, returned before anything is created or
// subscribed; nil options are ignored.
//
// # Storing
//
// One bucket (DefaultBucket, TTL DefaultTTL: its MaxAge) holds every
// payload. Object names are 128 random bits, so a name cannot be guessed,
// only learnt from a reference. Chunks are sized to the connection's limit
// (the object store's default 128 KiB chunk fails on a server with a 64
// KiB limit). The payload is stored completely, every chunk and the meta
// data acknowledged, before the reference is published; when storing
// fails nothing is published and whatever was written is purged, also
// when the context was cancelled or the connection dropped. When the
// reference cannot be published the payload is deleted; for JetStream only
// when the failure proves the reference was not stored (otherwise a stored
// reference could point at nothing; the TTL removes the payload).
//
// The uploader writes the object store's own format (chunks on
// $O.<bucket>.C.<nuid>, the ObjectInfo on $O.<bucket>.M.<name>) instead
// of calling ObjectStore.Put, because Put does not tell a caller the chunk
// subject of a failed upload, so its leftovers could not be purged. All
// else (bucket creation, GetInfo, delete, TTL) is the object store's, and
// the tests read uploads back with ObjectStore.Get.
//
// An upload records two digests of the payload, computed in one pass over
// each chunk on a goroutine of its own while the chunks go out: the
// object store's SHA-256 (its Digest field, which nats.go's Get and the
// nats CLI check) and HighwayHash-256 (nats-server's own message hash,
// several times SHA-256's speed, under the fixed public key
// xfer.HighwayKey that transfer streams use) in the object's metadata
// under natssend-hh256, base64url. Both detect faults (a chunk lost,
// doubled, reordered or altered on the way or at rest), not forgers:
// whoever may write the meta message may write either.
//
// Errors of the publish methods for which the Store knows that nothing
// was published match ErrNotPublished; an unknown outcome (a JetStream
// acknowledgement that timed out) does not.
//
// A Store's publisher holds a subscription, a goroutine and a status
// listener on the connection once it has uploaded something; Close
// releases them (needed only when the connection outlives the Store).
//
// # Resolving
//
// Resolve returns a message's payload, allocating no more than twice what
// it has received (the payload's buffer is allocated once half the
// declared size has arrived, so a forged size fails before anything of
// that size is allocated; chunks are hashed and copied into it as they
// arrive); Open streams it within a window of bytes (WithOpenWindow).
// Both read with JetStream direct gets (the object store's stream allows
// them): the meta data by last-by-subject, the chunks in batches by
// subject and bytes, asked for again from the first missing chunk when
// replies are lost. A read creates no consumer and makes no meta-leader
// request, so any number of readers can read one claim check at once and
// any replica of a replicated bucket answers; a claim check of one batch
// (8 MiB by default) resolves in two round trips. A replica that lags
// behind the upload (after a failover) is not taken for a missing object:
// the stream's leader is asked before ErrMissing. A server older than
// nats-server 2.11, which answers a batch request with one message, is
// read one chunk per request. A bucket stream without allow_direct is not
// read (errors.ErrUnsupported, at once). An object whose chunks are larger
// than a Store on the reading connection writes its own (its max_payload
// less 512 bytes) is read when the bucket's stream is served by the
// reader's server or its cluster (a server checks max_payload on
// publishes, not on deliveries: another client's object store writes
// chunks of the server's whole limit, which reach readers there), and
// refused before any chunk is asked for (ErrTooLarge) when it is served
// elsewhere or is above shim.CapPayload's cap: across a leafnode each
// such chunk would close the link on its way. Both verify the declared size, the chunk
// count and the digest: the HighwayHash-256 when the metadata has a
// natssend-hh256 entry (a malformed one fails at once with ErrCorrupt),
// the object store's SHA-256 otherwise (an object an older Store, nats.go
// or the nats CLI wrote); a mismatch of either is ErrCorrupt. Both
// honour the caller's deadline however long (the object store's Get
// stops at 5 s without one; without a deadline these use
// DefaultReadTimeout). Errors are *ResolveError wrapping ErrMissing,
// ErrCorrupt, ErrSubjectMismatch or ErrTooLarge.
//
// Concurrent Resolves of one claim check on one Store (the same object,
// declared size and subject: a message fanned out to many subscriptions of
// one process) share one read: the payload crosses the network once and
// every caller gets a buffer of its own (the last to take it gets the
// read's own, so a lone Resolve copies nothing). Each caller keeps its own
// deadline and cancellation: one that gives up returns at once with its
// context's error and the read goes on for the others; the read stops
// when every caller waiting for it has given up. A failure of the read is
// every waiting caller's, and so is a panic (raised again in each caller,
// with its value); a WithSubjectMatch function runs once per read, not
// per caller. Readers in other processes, or on other Stores, read on
// their own. Open never shares.
//
// A claim check is bound to the subject it was published on, recorded in
// the object's metadata. By default Resolve refuses a reference received
// on another subject (ErrSubjectMismatch), so a publisher allowed on one
// subject cannot make a receiver of that subject load a payload stored
// for another subject, even when it learnt the object's name. The subject
// a receiver sees is usually the published one, for Core NATS subscribers
// and JetStream consumers alike, but not always: a stream's
// SubjectTransform stores (and its consumers see) the transformed
// subject, and sources or mirrors with subject transforms, republish, and
// account subject mappings or imports rewrite it too. Receivers behind
// such a rewrite need WithSubjectBinding(false) (the object name, 128
// random bits, is then the only protection) or WithSubjectMatch (accept
// exactly the rewrites expected). Consume and Messages never Term a
// message for ErrSubjectMismatch: they Nak it, so that a misconfigured
// receiver cannot delete work-queue messages. The binding is as strong as
// write access to the bucket: whoever may write $O.<bucket>.M.> can
// rewrite metadata.
//
// # Receiving and deleting
//
// Subscribe, QueueSubscribe, Consume and Messages resolve before the
// handler runs. A failure goes to the error callback (or is returned by
// Messages.Next) and never reaches the handler; a JetStream message that
// failed is never acked: permanent failures (missing, corrupt, too large)
// are Term'd, transient ones and subject mismatches Nak'd with a delay.
// Consume and Messages pull one message at a time by default, so that no
// prefetched message's AckWait runs out unseen while a large payload is
// read; Consume keeps its handler busy all the same: the handler runs on
// a goroutine of its own while the next message is pulled and resolved,
// kept in progress until the handler takes it.
//
// Payloads are removed by the bucket's TTL. DeleteAfterRead deletes a
// payload once its message is handled; it is meant for single-reader
// delivery (queue groups, work-queue streams). On fan-out subjects every
// subscriber reads the same payload and none can tell when the last one is
// done, so the TTL must be long enough for the slowest reader.
//
// # Wire format
//
// The wire format (reference headers, object names, the subject binding
// and digests in the object's metadata, chunk sizes, deletion) is
// specified in docs/protocol.md, which is normative and versioned, so that
// services in other languages read and write claim checks too; this
// documentation describes the Go API.
package claimcheck
