package claimcheck_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// foreignClaimCheck stores data as another object-store client writes
// it (the object store's own Put, at the chunk size every client uses on
// a server of max_payload chunk: min(max_payload, 128 KiB)), with the
// subject binding docs/protocol.md specifies (the metadata entry
// claim-check-subject) and no natssend-hh256 entry, and returns the
// reference message on subject, headers as docs/protocol.md gives them.
func foreignClaimCheck(t *testing.T, js jetstream.JetStream, bucket, subject string, data []byte, chunk int) *nats.Msg {
	t.Helper()
	var b [16]byte
	_, _ = rand.Read(b[:])
	name := base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding).EncodeToString(b[:])
	ctx := ctxT(t)
	for {
		// A stream just created in a cluster may have no leader yet.
		obs, err := js.ObjectStore(ctx, bucket)
		if err == nil {
			_, err = obs.Put(ctx, jetstream.ObjectMeta{
				Name:     name,
				Metadata: map[string]string{"claim-check-subject": subject},
				Opts:     &jetstream.ObjectMetaOptions{ChunkSize: uint32(chunk)},
			}, bytes.NewReader(data))
		}
		if err == nil {
			break
		}
		if !errors.Is(err, nats.ErrNoResponders) || ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &nats.Msg{Subject: subject, Header: nats.Header{
		claimcheck.HeaderRef:    {name},
		claimcheck.HeaderSize:   {strconv.Itoa(len(data))},
		claimcheck.HeaderBucket: {bucket},
	}}
}

// TestReadsForeignChunksOfTheServersLimit: a Store reads a claim check
// another client wrote with the object store's API at the server's own
// chunk size (65,536 bytes on a 64 KiB server, as nats.js and nats.go
// write them there), with the subject binding recorded as the spec says:
// on the server that holds the bucket, and on another server of its
// cluster (routes carry any size; a server checks max_payload on
// publishes, not on deliveries). Before the fix the read was refused as
// unreachable (above the 65,024 a Store on that connection writes).
// Across a leafnode with that limit it stays refused
// (TestReadRefusesChunksThatCannotReachIt), and so it is under a path
// cap (shim.CapPayload) below the chunks.
func TestReadsForeignChunksOfTheServersLimit(t *testing.T) {
	t.Parallel()
	const chunk = limit // the object store's chunk on this server
	want := payload(3*chunk+123, 77)

	t.Run("one server", func(t *testing.T) {
		t.Parallel()
		s := startServer(t)
		_, js := connect(t, s.URL())
		st := newStore(t, js, claimcheck.WithBucket("foreign"))
		newStore(t, js, claimcheck.WithBucket("foreign_other")) // another bucket: its placement is asked for
		for _, bucket := range []string{"foreign", "foreign_other"} {
			ref := foreignClaimCheck(t, js, bucket, "orders.new", want, chunk)
			got, err := st.Resolve(ctxT(t), ref)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: Resolve %d bytes, %v", bucket, len(got), err)
			}
			rc, err := st.Open(ctxT(t), ref)
			if err != nil {
				t.Fatalf("%s: Open: %v", bucket, err)
			}
			got, err = io.ReadAll(rc)
			_ = rc.Close()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: Open read %d bytes, %v", bucket, len(got), err)
			}
			// The binding is checked: another subject is refused.
			ref.Subject = "orders.other"
			if _, err := st.Resolve(ctxT(t), ref); !errors.Is(err, claimcheck.ErrSubjectMismatch) {
				t.Fatalf("%s: on another subject: %v, want ErrSubjectMismatch", bucket, err)
			}
		}
		// A path cap at the server's limit says a leafnode of that limit
		// lies on the way: the chunks (with a direct get's headers) would
		// close it, and the read is refused before any chunk is asked for.
		cnc, cjs := connect(t, s.URL())
		if err := shim.CapPayload(cnc, limit); err != nil {
			t.Fatal(err)
		}
		capped := newStore(t, cjs, claimcheck.WithBucket("foreign"))
		ref := foreignClaimCheck(t, js, "foreign", "orders.new", want, chunk)
		if _, err := capped.Resolve(ctxT(t), ref); !errors.Is(err, claimcheck.ErrUnreachable) {
			t.Fatalf("under a path cap of %d: %v, want ErrUnreachable", limit, err)
		}
	})

	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := natstest.StartCluster(t, 3, natstest.MaxPayload(limit), natstest.JetStream())
		_, wjs := connect(t, c.Servers[0].URL())
		newStore(t, wjs, claimcheck.WithBucket("foreign")) // R1, placed on any node
		ref := foreignClaimCheck(t, wjs, "foreign", "orders.new", want, chunk)
		for i, srv := range c.Servers {
			_, rjs := connect(t, srv.URL())
			st := newStore(t, rjs, claimcheck.WithBucket("foreign"))
			if got, err := st.Resolve(ctxT(t), ref); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("reader on node %d: Resolve %d bytes, %v", i+1, len(got), err)
			}
		}
	})
}
