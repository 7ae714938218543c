package shim_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// TestClaimCheckErrorTable makes every claimcheck row of the README's
// table "What each error means for the caller" happen on a real server,
// and checks the code and outcome shim gives it (Describe, Classify,
// MayHaveRun), that errors.Is still sees claimcheck's error and its cause,
// that it came within the caller's deadline, and that nothing was stored
// or published.
func TestClaimCheckErrorTable(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	s := natstest.Start(t, natstest.JetStream(), natstest.MaxPayload(limit))
	nc := connect(t, s.URL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	buckets := 0
	newStore := func(t *testing.T, opts ...claimcheck.Option) *claimcheck.Store {
		t.Helper()
		buckets++
		bucket := fmt.Sprintf("errtable_%d", buckets)
		st, err := claimcheck.New(ctx, js, append([]claimcheck.Option{claimcheck.WithBucket(bucket)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	big := func() *nats.Msg { return &nats.Msg{Subject: "ev.data", Data: make([]byte, 3*limit)} }
	published := make(chan *nats.Msg, 16)
	if _, err := nc.ChanSubscribe("ev.>", published); err != nil {
		t.Fatal(err)
	}
	noJS := natstest.Start(t)
	noJSConn := connect(t, noJS.URL())

	type row struct {
		name string
		make func(t *testing.T) error
		code string
		is   []error
	}
	for _, r := range []row{
		{"invalid option", func(t *testing.T) error {
			_, err := claimcheck.New(ctx, js, claimcheck.WithTTL(-time.Second))
			return err
		}, shim.CodeInvalidArgument, []error{claimcheck.ErrInvalidOption, shim.ErrInvalidOption}},
		{"subscription helper without its error callback", func(t *testing.T) error {
			_, err := newStore(t).Subscribe("ev.data", func(*nats.Msg) {}, nil)
			return err
		}, shim.CodeInvalidArgument, []error{claimcheck.ErrNoErrorHandler}},
		{"reserved header", func(t *testing.T) error {
			m := big()
			m.Header = nats.Header{claimcheck.HeaderRef: {"x"}}
			return newStore(t).PublishMsg(ctx, m)
		}, shim.CodeInvalidArgument, []error{claimcheck.ErrReservedHeader, claimcheck.ErrNotPublished}},
		{"nil message", func(t *testing.T) error {
			return newStore(t).PublishMsg(ctx, nil)
		}, shim.CodeInvalidArgument, []error{claimcheck.ErrNotPublished}},
		{"body above the Store's maximum", func(t *testing.T) error {
			return newStore(t, claimcheck.WithMaxObjectSize(2*limit)).PublishMsg(ctx, big())
		}, shim.CodePayloadTooLarge, []error{claimcheck.ErrTooLarge, claimcheck.ErrNotPublished}},
		{"closed Store", func(t *testing.T) error {
			st := newStore(t)
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			return st.PublishMsg(ctx, big())
		}, shim.CodeUnavailable, []error{claimcheck.ErrClosed, claimcheck.ErrNotPublished}},
		{"context done before the upload", func(t *testing.T) error {
			done, cancel := context.WithCancel(ctx)
			cancel()
			return newStore(t).PublishMsg(done, big())
		}, shim.CodeCanceled, []error{context.Canceled, claimcheck.ErrNotPublished}},
		{"JetStream publish on a subject no stream binds", func(t *testing.T) error {
			_, err := newStore(t).PublishJetStream(ctx, &nats.Msg{Subject: "nostream.x", Data: []byte("small")})
			return err
		}, shim.CodeNoResponders, []error{claimcheck.ErrNotPublished}},
		{"bucket deleted after New", func(t *testing.T) error {
			st := newStore(t)
			if err := js.DeleteObjectStore(ctx, st.Bucket()); err != nil {
				t.Fatal(err)
			}
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
			defer pcancel()
			t0 := time.Now()
			err := st.PublishMsg(pctx, big())
			if el := time.Since(t0); el > 2*time.Second+500*time.Millisecond {
				t.Errorf("PublishMsg with a 2 s context returned after %v", el)
			}
			if _, serr := js.Stream(ctx, "OBJ_"+st.Bucket()); !errors.Is(serr, jetstream.ErrStreamNotFound) {
				t.Errorf("the publish made the bucket's stream again: %v", serr)
			}
			return err
		}, shim.CodeNotFound, []error{jetstream.ErrBucketNotFound, claimcheck.ErrNotPublished}},
		{"New without JetStream", func(t *testing.T) error {
			njs, err := jetstream.New(noJSConn)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			_, err = claimcheck.New(ctx, njs)
			if el := time.Since(t0); el > 5*time.Second {
				t.Errorf("New without JetStream failed after %v, want at once", el)
			}
			return err
		}, shim.CodeUnavailable, []error{jetstream.ErrJetStreamNotEnabled}},
		{"Resolve of a payload deleted", func(t *testing.T) error {
			st := newStore(t)
			ref, err := st.Prepare(ctx, big(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.ObjectStore().Delete(ctx, ref.Header.Get(claimcheck.HeaderRef)); err != nil {
				t.Fatal(err)
			}
			_, err = st.Resolve(ctx, ref)
			return err
		}, shim.CodeNotFound, []error{claimcheck.ErrMissing}},
		{"Resolve of a malformed reference", func(t *testing.T) error {
			m := &nats.Msg{Subject: "ev.data", Header: nats.Header{claimcheck.HeaderRef: {"not a name"}, claimcheck.HeaderSize: {"10"}}}
			_, err := newStore(t).Resolve(ctx, m)
			return err
		}, shim.CodeDataLoss, []error{claimcheck.ErrCorrupt}},
		{"Resolve of a reference bound to another subject", func(t *testing.T) error {
			st := newStore(t)
			ref, err := st.Prepare(ctx, big(), 0)
			if err != nil {
				t.Fatal(err)
			}
			ref.Subject = "ev.other"
			_, err = st.Resolve(ctx, ref)
			return err
		}, shim.CodeDataLoss, []error{claimcheck.ErrSubjectMismatch, claimcheck.ErrCorrupt}},
		{"Resolve of a size above the reader's maximum", func(t *testing.T) error {
			st := newStore(t)
			ref, err := st.Prepare(ctx, big(), 0)
			if err != nil {
				t.Fatal(err)
			}
			small := newStore(t, claimcheck.WithBucket(st.Bucket()), claimcheck.WithMaxObjectSize(limit))
			_, err = small.Resolve(ctx, ref)
			return err
		}, shim.CodePayloadTooLarge, []error{claimcheck.ErrTooLarge}},
	} {
		t.Run(r.name, func(t *testing.T) {
			err := r.make(t)
			if err == nil {
				t.Fatal("no error")
			}
			t.Logf("%v", err)
			d := shim.Describe(err)
			if d.Code != r.code || shim.Classify(err) != shim.OutcomeNotRun || shim.MayHaveRun(err) || d.Outcome() != shim.OutcomeNotRun {
				t.Errorf("code %s, Classify %v, MayHaveRun %v; want %s, not run", d.Code, shim.Classify(err), shim.MayHaveRun(err), r.code)
			}
			for _, target := range append(r.is, err) {
				if !errors.Is(d, target) {
					t.Errorf("errors.Is(Describe(err), %v) is false", target)
				}
			}
		})
	}
	// No row published anything on ev.> (Prepare publishes nothing).
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(published) != 0 {
		t.Errorf("%d messages were published", len(published))
	}
	if shim.Classify(errors.New("foreign")) != shim.OutcomeUnknown || shim.Describe(nil) != nil {
		t.Error("a foreign error must be OutcomeUnknown, and Describe(nil) nil")
	}
}
