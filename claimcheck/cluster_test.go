package claimcheck_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
)

// The distributed engine: a 3-node JetStream cluster on loopback, the
// bucket replicated 3 times, and nodes killed while payloads are being
// uploaded.

var clusterOpts = []natstest.Option{natstest.MaxPayload(limit), natstest.JetStream()}

const bucketStream = "OBJ_" + claimcheck.DefaultBucket

// clusterConn connects to urls in the order given, reconnecting forever
// without a reconnect buffer.
func clusterConn(t *testing.T, urls string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	return connect(t, urls, nats.DontRandomize(), nats.MaxReconnects(-1),
		nats.ReconnectWait(50*time.Millisecond), nats.ReconnectBufSize(-1))
}

// r3Store creates (or binds) the R3 bucket and waits until its stream has
// a leader and every running node's replica is current: a stream just
// created may still be electing its leader, and an upload then fails with
// "no response from stream" (nothing stored, ErrNotPublished), which is
// right but not what these tests are about.
//
// Under -race on a loaded machine the cluster sometimes never answers a
// stream create (the response is lost in a meta leader change), so New
// waits until its context ends. Creating or binding the bucket is
// idempotent: New is called again after such a timeout, at most 4 times.
func r3Store(t *testing.T, c *natstest.Cluster, js jetstream.JetStream) *claimcheck.Store {
	t.Helper()
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		st, err := claimcheck.New(ctx, js, claimcheck.WithReplicas(3))
		cancel()
		if err == nil {
			c.WaitStreamCurrent(bucketStream, 30*time.Second)
			waitStreamAccepts(t, js, st)
			return st
		}
		if attempt == 4 || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		t.Logf("attempt %d: %v; binding again", attempt, err)
	}
}

// waitStreamAccepts waits until the bucket's stream acknowledges a
// publish made through js (a new R3 stream's leader and its interest on
// js's server are in place: an upload before that gets no response, and
// fails at once), then purges the probe.
func waitStreamAccepts(t *testing.T, js jetstream.JetStream, st *claimcheck.Store) {
	t.Helper()
	probe := "$O." + claimcheck.DefaultBucket + ".C.probe"
	natstest.Eventually(t, 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := js.Publish(ctx, probe, nil)
		return err == nil
	}, "the bucket's stream to acknowledge a publish")
	stream, err := js.Stream(ctxT(t), bucketStream)
	if err == nil {
		err = stream.Purge(ctxT(t), jetstream.WithPurgeSubject(probe))
	}
	if err != nil {
		t.Fatal(err)
	}
}

// received collects the messages published in a cluster test, unresolved.
type received struct {
	mu   sync.Mutex
	msgs []*nats.Msg
}

func receive(t *testing.T, nc *nats.Conn, subject string) *received {
	t.Helper()
	r := &received{}
	if _, err := nc.Subscribe(subject, func(m *nats.Msg) { r.mu.Lock(); r.msgs = append(r.msgs, m); r.mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return r
}

// interestEverywhere waits until every server of c knows of a
// subscription to subject: a reference published on another node before
// its route learnt the interest is dropped (core NATS), and the test would
// wait for it in vain.
func interestEverywhere(t *testing.T, c *natstest.Cluster, subject string) {
	t.Helper()
	for _, s := range c.Servers {
		natstest.Eventually(t, 20*time.Second, func() bool {
			acc, err := s.Server().LookupAccount(natstest.DefaultAccount)
			return err == nil && acc.SubscriptionInterest(subject)
		}, "the interest in "+subject+" on every node")
	}
}

// resolveAll resolves every received reference, after failover, and
// checks it byte for byte against the payload its Seq header names.
func (r *received) resolveAll(t *testing.T, st *claimcheck.Store, size int) int {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.msgs {
		if !claimcheck.IsClaimCheck(m) {
			t.Fatalf("message %v is not a claim check", m.Header)
		}
		seq, _ := strconv.Atoi(m.Header.Get("Seq"))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		data, err := st.Resolve(ctx, m)
		cancel()
		if err != nil {
			t.Fatalf("reference %d does not resolve: %v", seq, err)
		}
		if !bytes.Equal(data, payload(size, uint64(seq))) {
			t.Fatalf("reference %d resolves to other bytes", seq)
		}
	}
	return len(r.msgs)
}

// checkNoOrphans asserts that every chunk message in the bucket belongs
// to a complete object, with the subjects and their counts from the
// stream's leader.
func checkNoOrphans(t *testing.T, js jetstream.JetStream, st *claimcheck.Store) int {
	t.Helper()
	ctx := ctxT(t)
	s, err := js.Stream(ctx, bucketStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter("$O."+st.Bucket()+".>"))
	if err != nil {
		t.Fatal(err)
	}
	chunks := map[string]uint32{} // NUID -> chunks, from the meta data
	metaPrefix := "$O." + st.Bucket() + ".M."
	for subj := range info.State.Subjects {
		if !strings.HasPrefix(subj, metaPrefix) {
			continue
		}
		name, err := base64.URLEncoding.DecodeString(strings.TrimPrefix(subj, metaPrefix))
		if err != nil {
			t.Fatalf("meta subject %s: %v", subj, err)
		}
		oi, err := st.ObjectStore().GetInfo(ctx, string(name))
		if err != nil {
			t.Fatalf("object %s: %v", name, err)
		}
		chunks[oi.NUID] = oi.Chunks
	}
	for subj, n := range info.State.Subjects {
		if strings.HasPrefix(subj, metaPrefix) {
			continue
		}
		nuid := subj[strings.LastIndex(subj, ".")+1:]
		if want, ok := chunks[nuid]; !ok || uint64(want) != n {
			t.Errorf("orphan chunks: %s holds %d messages; an object owns it: %v, with %d chunks", subj, n, ok, want)
		}
	}
	return len(chunks)
}

func TestClusterR3RoundTrip(t *testing.T) {
	t.Parallel()
	c := natstest.StartCluster(t, 3, clusterOpts...)
	_, js := clusterConn(t, c.Servers[0].URL())
	subNC, subJS := clusterConn(t, c.Servers[2].URL())
	st := r3Store(t, c, js)
	rst := r3Store(t, c, subJS)
	got := receive(t, subNC, "r3")
	interestEverywhere(t, c, "r3")
	const size = 1 << 20
	for i := range 3 {
		m := &nats.Msg{Subject: "r3", Header: nats.Header{"Seq": {strconv.Itoa(i)}}, Data: payload(size, uint64(i))}
		if err := st.PublishMsg(ctxT(t), m); err != nil {
			t.Fatal(err)
		}
	}
	natstest.Eventually(t, 20*time.Second, func() bool { got.mu.Lock(); defer got.mu.Unlock(); return len(got.msgs) == 3 }, "3 references")
	if n := got.resolveAll(t, rst, size); n != 3 {
		t.Fatalf("%d resolved", n)
	}
	s, err := js.Stream(ctxT(t), bucketStream)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.CachedInfo().Config.Replicas; r != 3 {
		t.Fatalf("bucket replicas = %d", r)
	}
	checkNoOrphans(t, js, st)
}

// killMidUpload publishes uploads payloads one after another from a
// connection to pubURLs and, once the second upload is under way, stops
// the node victim returns. Every publish must succeed or fail with
// ErrNotPublished; every published reference must resolve byte-exact
// after failover; nothing may be left in the bucket that no object owns.
func killMidUpload(t *testing.T, c *natstest.Cluster, pubURLs string, victim func() *natstest.Server) {
	const size, uploads = 4 << 20, 5
	pubNC, js := clusterConn(t, pubURLs)
	st := r3Store(t, c, js)
	// Receive and inspect from a node that stays up.
	killed := victim()
	var other *natstest.Server
	for _, s := range c.Servers {
		if s != killed {
			other = s
			break
		}
	}
	subNC, subJS := clusterConn(t, other.URL())
	rst := r3Store(t, c, subJS)
	got := receive(t, subNC, "fo")
	interestEverywhere(t, c, "fo")

	var published, refused int
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range uploads {
			if i == 1 {
				close(started)
			}
			m := &nats.Msg{Subject: "fo", Header: nats.Header{"Seq": {strconv.Itoa(i)}}, Data: payload(size, uint64(i))}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := st.PublishMsg(ctx, m)
			cancel()
			switch {
			case err == nil:
				published++
			case errors.Is(err, claimcheck.ErrNotPublished):
				refused++
				// Whether the partial upload was removed: a flake once
				// left a whole upload's chunks behind.
				t.Logf("upload %d not published: %v", i, err)
			default:
				t.Errorf("upload %d: %v: neither published nor ErrNotPublished", i, err)
			}
		}
	}()
	<-started
	time.Sleep(20 * time.Millisecond) // into the second upload, not before it
	killed.Shutdown()
	<-done
	_ = pubNC
	killed.Restart(clusterOpts...)
	c.WaitReady(30 * time.Second)
	natstest.Eventually(t, 20*time.Second, func() bool { got.mu.Lock(); defer got.mu.Unlock(); return len(got.msgs) >= published-1 }, "the published references")
	// Resolve at once, while the restarted node may still be catching up.
	resolved := got.resolveAll(t, rst, size)
	// Inspect once every replica is current (listing reads a replica).
	c.WaitStreamCurrent(bucketStream, 30*time.Second)
	objects := checkNoOrphans(t, subJS, rst)
	t.Logf("killed %s mid-upload: %d published, %d not published; %d references received, all resolve; %d objects stored, no orphans",
		killed.Name(), published, refused, resolved, objects)
	if published+refused != uploads {
		t.Fatalf("%d published + %d refused of %d", published, refused, uploads)
	}
}

func TestClusterStreamLeaderKilledMidUpload(t *testing.T) {
	t.Parallel()
	c := natstest.StartCluster(t, 3, clusterOpts...)
	// Create the bucket first so that its stream has a leader to kill.
	_, js := clusterConn(t, c.URLs())
	r3Store(t, c, js)
	leader := c.StreamLeader(bucketStream)
	if leader == nil {
		t.Fatal("no stream leader")
	}
	// Publish from a node that is not the leader.
	var pub *natstest.Server
	for _, s := range c.Servers {
		if s != leader {
			pub = s
			break
		}
	}
	killMidUpload(t, c, pub.URL()+","+c.URLs(), func() *natstest.Server { return leader })
}

func TestClusterClientServerKilledMidUpload(t *testing.T) {
	t.Parallel()
	c := natstest.StartCluster(t, 3, clusterOpts...)
	first := c.Servers[0]
	killMidUpload(t, c, c.URLs(), func() *natstest.Server { return first })
}
