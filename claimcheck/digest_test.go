package claimcheck_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/highwayhash"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/xfer"
)

// TestStoreWritesBothDigests: an object the Store writes carries the
// object store's SHA-256 digest, which nats.go's ObjectStore checks on
// Get and GetBytes (both of its APIs: jetstream's and the legacy one the
// nats CLI uses), and the HighwayHash-256 of the payload under
// xfer.HighwayKey in its metadata, which Resolve and Open check.
func TestStoreWritesBothDigests(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	for _, n := range []int{limit - 600, limit + 1, 3*limit + 17} {
		want := payload(n, uint64(n)+1)
		ref, err := st.Prepare(ctxT(t), &nats.Msg{Subject: "both", Data: want}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !claimcheck.IsClaimCheck(ref) {
			ref = forceRef(t, st, "both", want) // small enough to travel whole
		}
		name := ref.Header.Get(claimcheck.HeaderRef)
		info, err := st.ObjectStore().GetInfo(ctxT(t), name)
		if err != nil {
			t.Fatal(err)
		}
		hh := highwayhash.Sum(want, xfer.HighwayKey[:])
		if got, wantV := info.Metadata[claimcheck.MetaDigest], base64.URLEncoding.EncodeToString(hh[:]); got != wantV {
			t.Fatalf("%d bytes: metadata %s = %q, want %q", n, claimcheck.MetaDigest, got, wantV)
		}
		if info.Metadata[claimcheck.MetaSubject] != "both" {
			t.Fatalf("%d bytes: metadata %v lost the subject", n, info.Metadata)
		}
		raw, err := st.ObjectStore().GetBytes(ctxT(t), name)
		if err != nil || !bytes.Equal(raw, want) {
			t.Fatalf("%d bytes: jetstream ObjectStore.GetBytes: %d bytes, %v", n, len(raw), err)
		}
		legacy := legacyObjectStore(t, nc, st.Bucket())
		if li, err := legacy.GetInfo(name); err != nil || li.Digest != info.Digest || li.Metadata[claimcheck.MetaDigest] == "" {
			t.Fatalf("%d bytes: legacy GetInfo = %+v, %v", n, li, err)
		}
		lr, err := legacy.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		lraw, err := io.ReadAll(lr)
		_ = lr.Close()
		if err != nil || !bytes.Equal(lraw, want) {
			t.Fatalf("%d bytes: legacy ObjectStore.Get: %d bytes, %v", n, len(lraw), err)
		}
		data, err := st.Resolve(ctxT(t), ref)
		if err != nil || !bytes.Equal(data, want) {
			t.Fatalf("%d bytes: Resolve: %d bytes, %v", n, len(data), err)
		}
		if streamed := openAll(t, st, ref); !bytes.Equal(streamed, want) {
			t.Fatalf("%d bytes: Open read %d bytes", n, len(streamed))
		}
	}
}

// TestResolveObjectOfNatsGo: an object nats.go's ObjectStore wrote (no
// HighwayHash entry, as from an older Store or the nats CLI) resolves
// against its SHA-256 digest, which still catches altered chunks.
func TestResolveObjectOfNatsGo(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.URL())
	st := newStore(t, js)
	want := payload(2*limit+5, 21)
	const name = "abcdefghijklmnopqrstuvwxyz"
	_, err := st.ObjectStore().Put(ctxT(t), jetstream.ObjectMeta{
		Name:     name,
		Metadata: map[string]string{claimcheck.MetaSubject: "natsgo"},
		Opts:     &jetstream.ObjectMetaOptions{ChunkSize: 16 << 10},
	}, bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	ref := &nats.Msg{Subject: "natsgo", Header: nats.Header{
		claimcheck.HeaderRef:  {name},
		claimcheck.HeaderSize: {strconv.Itoa(len(want))},
	}}
	if data, err := st.Resolve(ctxT(t), ref); err != nil || !bytes.Equal(data, want) {
		t.Fatalf("Resolve: %d bytes, %v", len(data), err)
	}
	if streamed := openAll(t, st, ref); !bytes.Equal(streamed, want) {
		t.Fatalf("Open read %d bytes", len(streamed))
	}
	bad := bytes.Clone(want)
	bad[len(bad)/2] ^= 0x80
	replaceChunks(t, js, st, name, bad)
	wantCorrupt(t, st, ref, "SHA-256 digest mismatch")
}

// TestAlteredChunkDetectedUnderEitherDigest: a byte altered in a stored
// chunk fails Resolve and Open with ErrCorrupt, whether the meta data
// names the HighwayHash digest or (that entry removed, as an older Store
// writes it) only the SHA-256 one.
func TestAlteredChunkDetectedUnderEitherDigest(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	for _, tc := range []struct {
		name, want string
		edit       func(*jetstream.ObjectInfo)
	}{
		{"highway", "HighwayHash-256 digest mismatch", nil},
		{"sha256", "SHA-256 digest mismatch", func(info *jetstream.ObjectInfo) { delete(info.Metadata, claimcheck.MetaDigest) }},
	} {
		want := payload(3*limit, 31)
		ref := sendAndReceive(t, nc, st, &nats.Msg{Subject: "alt", Data: want})
		name := ref.Header.Get(claimcheck.HeaderRef)
		if tc.edit != nil {
			rewriteMeta(t, js, st, name, tc.edit)
			// Intact chunks still resolve under SHA-256 alone.
			if data, err := st.Resolve(ctxT(t), ref); err != nil || !bytes.Equal(data, want) {
				t.Fatalf("%s: Resolve of intact chunks: %d bytes, %v", tc.name, len(data), err)
			}
		}
		for _, at := range []int{0, limit + 1, len(want) - 1} { // first, middle and last chunk
			bad := bytes.Clone(want)
			bad[at] ^= 1
			replaceChunks(t, js, st, name, bad)
			wantCorrupt(t, st, ref, tc.want)
		}
	}
}

// TestMalformedHighwayEntryIsCorrupt: a HighwayHash entry that is not
// 32 bytes in base64url fails Resolve and Open with ErrCorrupt naming
// it, before any chunk is read; a well-formed but wrong one fails the
// check.
func TestMalformedHighwayEntryIsCorrupt(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.URL())
	st := newStore(t, js)
	want := payload(limit+10, 41)
	ref := sendAndReceive(t, nc, st, &nats.Msg{Subject: "mal", Data: want})
	name := ref.Header.Get(claimcheck.HeaderRef)
	sum := highwayhash.Sum(want, xfer.HighwayKey[:])
	good := base64.URLEncoding.EncodeToString(sum[:])
	for what, v := range map[string]string{
		"empty":              "",
		"short":              good[:43],
		"long":               good + "A",
		"no padding":         base64.RawURLEncoding.EncodeToString(sum[:]),
		"standard alphabet":  strings.Repeat("+/", 21) + "A=",
		"not base64":         strings.Repeat("!", len(good)),
		"hex":                hex.EncodeToString(sum[:]),
		"33 bytes":           base64.URLEncoding.EncodeToString(append(sum[:], 0)),
		"31 bytes":           base64.URLEncoding.EncodeToString(sum[:31]),
		"sha-256 form":       "SHA-256=" + good,
		"with a space":       " " + good[1:],
		"trailing newline":   good[:43] + "\n",
		"the SHA-256 digest": "",
	} {
		if what == "the SHA-256 digest" {
			info, err := st.ObjectStore().GetInfo(ctxT(t), name)
			if err != nil {
				t.Fatal(err)
			}
			v = strings.TrimPrefix(info.Digest, "SHA-256=")
		}
		rewriteMeta(t, js, st, name, func(info *jetstream.ObjectInfo) { info.Metadata[claimcheck.MetaDigest] = v })
		msg := claimcheck.MetaDigest
		if what == "the SHA-256 digest" {
			msg = "HighwayHash-256 digest mismatch" // well formed, wrong
		}
		wantCorrupt(t, st, ref, msg)
	}
	rewriteMeta(t, js, st, name, func(info *jetstream.ObjectInfo) { info.Metadata[claimcheck.MetaDigest] = good })
	if data, err := st.Resolve(ctxT(t), ref); err != nil || !bytes.Equal(data, want) {
		t.Fatalf("Resolve with the entry restored: %d bytes, %v", len(data), err)
	}
}

// forceRef stores want as a claim check whatever its size, through
// PrepareLimit with a limit it exceeds.
func forceRef(t *testing.T, st *claimcheck.Store, subject string, want []byte) *nats.Msg {
	t.Helper()
	ref, err := st.PrepareLimit(ctxT(t), &nats.Msg{Subject: subject, Data: want}, 0, int64(len(want))/2+1024)
	if err != nil {
		t.Fatal(err)
	}
	if !claimcheck.IsClaimCheck(ref) {
		t.Fatalf("%d bytes not claim-checked", len(want))
	}
	return ref
}

// openAll reads ref through Open.
func openAll(t *testing.T, st *claimcheck.Store, ref *nats.Msg) []byte {
	t.Helper()
	r, err := st.Open(ctxT(t), ref)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return data
}

// wantCorrupt checks that Resolve and Open of ref fail with ErrCorrupt
// whose message contains msg, and that Resolve returns no data.
func wantCorrupt(t *testing.T, st *claimcheck.Store, ref *nats.Msg, msg string) {
	t.Helper()
	data, err := st.Resolve(ctxT(t), ref)
	if !errors.Is(err, claimcheck.ErrCorrupt) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("Resolve = %v, want ErrCorrupt (%s)", err, msg)
	}
	if data != nil {
		t.Fatalf("Resolve returned %d bytes beside its error", len(data))
	}
	r, err := st.Open(ctxT(t), ref)
	if err == nil {
		_, err = io.ReadAll(r)
		_ = r.Close()
	}
	if !errors.Is(err, claimcheck.ErrCorrupt) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("Open+ReadAll = %v, want ErrCorrupt (%s)", err, msg)
	}
}

// replaceChunks replaces object name's chunks with bad, cut at the
// object's chunk size, as someone with write access to the bucket could.
func replaceChunks(t *testing.T, js jetstream.JetStream, st *claimcheck.Store, name string, bad []byte) {
	t.Helper()
	info, err := st.ObjectStore().GetInfo(ctxT(t), name)
	if err != nil {
		t.Fatal(err)
	}
	chunkSubj := "$O." + st.Bucket() + ".C." + info.NUID
	stream, err := js.Stream(ctxT(t), "OBJ_"+st.Bucket())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(ctxT(t), jetstream.WithPurgeSubject(chunkSubj)); err != nil {
		t.Fatal(err)
	}
	cs := int(info.Opts.ChunkSize)
	for off := 0; off < len(bad); off += cs {
		if _, err := js.Publish(ctxT(t), chunkSubj, bad[off:min(off+cs, len(bad))]); err != nil {
			t.Fatal(err)
		}
	}
}

// rewriteMeta rewrites object name's meta data with edit applied, as
// someone with write access to the bucket could.
func rewriteMeta(t *testing.T, js jetstream.JetStream, st *claimcheck.Store, name string, edit func(*jetstream.ObjectInfo)) {
	t.Helper()
	info, err := st.ObjectStore().GetInfo(ctxT(t), name)
	if err != nil {
		t.Fatal(err)
	}
	edit(info)
	info.ModTime = time.Time{}
	data, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	meta := nats.NewMsg("$O." + st.Bucket() + ".M." + base64.URLEncoding.EncodeToString([]byte(name)))
	meta.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	meta.Data = data
	if _, err := js.PublishMsg(ctxT(t), meta); err != nil {
		t.Fatal(err)
	}
}

// legacyObjectStore binds to bucket through nats.go's legacy JetStream
// API, the one the nats CLI's object commands use.
func legacyObjectStore(t *testing.T, nc *nats.Conn, bucket string) nats.ObjectStore {
	t.Helper()
	ljs, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	obs, err := ljs.ObjectStore(bucket)
	if err != nil {
		t.Fatal(err)
	}
	return obs
}
