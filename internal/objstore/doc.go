// Package objstore is the reading engine beneath claimcheck: it reads an
// object store's meta data and chunks with JetStream direct gets
// ($JS.API.DIRECT.GET.<stream>, through the JetStream API prefix of the
// caller's jetstream.JetStream, so a domain's prefix is honoured), never
// with a consumer.
//
// A direct get needs no consumer and no meta-leader operation, so the
// number of concurrent readers is not capped by the stream's consumer
// limit, and any replica of a replicated stream with AllowDirect answers
// (the object store creates its streams with AllowDirect). The request
// subject is a queue subscription every replica holds, so its interest is
// known across gateways before a read starts; the replies come back on an
// inbox the reading connection subscribed to once.
//
// Chunks are asked for in batches (nats-server 2.11+: next_by_subj with
// batch and max_bytes). Every chunk of a batch carries its stream
// sequence, the sequence of the chunk sent before it in the batch
// (Nats-Last-Sequence) and how many matching messages remain after it
// (Nats-Num-Pending); the batch ends with a 204 EOB status. A Batch checks
// that chain, so a lost chunk is reported (ErrGap) and the caller asks
// again from the first missing sequence. A server that answers a batch
// request with a single message and no Nats-Num-Pending (older than
// 2.11) is read one chunk per request instead (Batch.Single).
//
// The bytes a connection has asked for and not yet received are bounded
// (Budget): the server closes a client connection whose pending output
// exceeds its max_pending (64 MiB by default) as a slow consumer, and many
// readers on one connection would otherwise ask for more than that at
// once.
//
// Many reads of one object (a claim check fanned out to every subscriber)
// read the same meta message: Reader.Decoded keeps what was decoded from
// it and hands it out only for the very same bytes.
package objstore
