// Package retrynested checks retries nested in loops over items, tests of // want package:"uses nats.go"
// "nothing was delivered" after a first error test, nats.go's own
// functions and the shim's non-sending functions, calls that do not
// return, and the naming of what is retried.
package retrynested

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

type Item struct {
	ID   string
	Data []byte
}

// A per-item retry nested in a batch loop.
func batchRetry(nc *nats.Conn, items [][]byte) { // want batchRetry:`sends via \(\*nats.Conn\).Request`
	for _, b := range items {
		for a := 0; a < 3; a++ {
			if _, err := nc.Request("o", b, time.Second); err == nil { // want `call of \(\*nats\.Conn\)\.Request is retried on failure: it may have run; use a fixed shim\.OperationID the responder de-duplicates, and Attempts`
				break
			}
		}
	}
}

// A worker loop that retries each message until it goes through.
func workerRetry(nc *nats.Conn, in <-chan []byte) { // want workerRetry:`sends via \(\*nats.Conn\).Publish`
	for b := range in {
		for {
			if err := nc.Publish("out", b); err == nil { // want `call of \(\*nats.Conn\).Publish is retried on failure`
				break
			}
			time.Sleep(time.Second)
		}
	}
}

// An outbox relay: the head is sent again until it goes through.
func relay(nc *nats.Conn, queue [][]byte) { // want relay:`sends via \(\*nats.Conn\).Request`
	for len(queue) > 0 {
		if _, err := nc.Request("o", queue[0], time.Second); err != nil { // want `call of \(\*nats.Conn\).Request is retried on failure`
			continue
		}
		queue = queue[1:]
	}
}

// The index advances only on success.
func indexOnSuccess(nc *nats.Conn, items [][]byte) { // want indexOnSuccess:`sends via \(\*nats.Conn\).Request`
	for i := 0; i < len(items); {
		if _, err := nc.Request("o", items[i], time.Second); err != nil { // want `call of \(\*nats.Conn\).Request is retried on failure`
			continue
		}
		i++
	}
}

// The message is rebuilt from the same inputs on each attempt: still the
// same message.
func rebuilt(nc *nats.Conn, items []Item) { // want rebuilt:`sends via \(\*nats.Conn\).Publish`
	for _, it := range items {
		for a := 0; a < 3; a++ {
			data := fmt.Appendf(nil, "%s:%s", it.ID, it.Data)
			if err := nc.Publish("o", data); err == nil { // want `call of \(\*nats.Conn\).Publish is retried on failure`
				break
			}
		}
	}
}

// Near miss: the failure path moves on to the next item as well.
func batchLogContinue(nc *nats.Conn, items [][]byte) { // want batchLogContinue:`sends via \(\*nats.Conn\).Request`
	for i := 0; i < len(items); i++ {
		if _, err := nc.Request("o", items[i], time.Second); err != nil {
			log.Print(err)
			continue
		}
	}
}

// Near miss: the next item is fetched on every path.
func fetchEach(nc *nats.Conn, next func() []byte) { // want fetchEach:`sends via \(\*nats.Conn\).Publish`
	for {
		b := next()
		if err := nc.Publish("o", b); err != nil {
			continue
		}
		log.Print("sent")
	}
}

// Near miss: the failure path skips the item, the success path too.
func skipFailed(nc *nats.Conn, queue [][]byte) { // want skipFailed:`sends via \(\*nats.Conn\).Publish`
	for len(queue) > 0 {
		head := queue[0]
		queue = queue[1:]
		if err := nc.Publish("o", head); err != nil {
			log.Print(err)
		}
	}
}

// Near miss: a heartbeat: the same message on success and on failure.
func heartbeat(ctx context.Context, nc *nats.Conn, tick <-chan time.Time) { // want heartbeat:`sends via \(\*nats.Conn\).Publish`
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			if err := nc.Publish("hb", []byte("x")); err != nil {
				log.Print(err)
				continue
			}
		}
	}
}

// Near miss: a JetStream retry with the message ID fixed per item, outside
// the retry loop.
func jsPerItem(ctx context.Context, js jetstream.JetStream, items []Item) { // want jsPerItem:`sends via \(jetstream.Publisher\).Publish`
	for _, it := range items {
		for a := 0; a < 3; a++ {
			if _, err := js.Publish(ctx, "x", it.Data, jetstream.WithMsgID(it.ID)); err == nil {
				break
			}
		}
	}
}

// The ID changes on every attempt of the nested retry.
func jsPerAttempt(ctx context.Context, js jetstream.JetStream, items []Item, fresh func() string) { // want jsPerAttempt:`sends via \(jetstream.Publisher\).Publish`
	for _, it := range items {
		for a := 0; a < 3; a++ {
			id := fresh()
			if _, err := js.Publish(ctx, "x", it.Data, jetstream.WithMsgID(id)); err == nil { // want `call of \(jetstream\.Publisher\)\.Publish is retried on failure: it may be stored; fix its ID with jetstream\.WithMsgID`
				break
			}
		}
	}
}

// Near miss: nested test of no responders after err != nil.
func nestedNoResponders(nc *nats.Conn, b []byte) (*nats.Msg, error) { // want nestedNoResponders:`sends via \(\*nats.Conn\).Request`
	for {
		m, err := nc.Request("s", b, time.Second)
		if err != nil {
			if errors.Is(err, nats.ErrNoResponders) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			return nil, err
		}
		return m, nil
	}
}

// The same shape on a timeout is a retry.
func nestedTimeout(nc *nats.Conn, b []byte) (*nats.Msg, error) { // want nestedTimeout:`sends via \(\*nats.Conn\).Request`
	for {
		m, err := nc.Request("s", b, time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure`
		if err != nil {
			if errors.Is(err, nats.ErrTimeout) {
				continue
			}
			return nil, err
		}
		return m, nil
	}
}

// Near miss: a switch with success first, then no responders.
func switchNoResponders(nc *nats.Conn, b []byte) (*nats.Msg, error) { // want switchNoResponders:`sends via \(\*nats.Conn\).Request`
	for {
		m, err := nc.Request("s", b, time.Second)
		switch {
		case err == nil:
			return m, nil
		case errors.Is(err, nats.ErrNoResponders):
			continue
		default:
			return nil, err
		}
	}
}

// Near miss: the shim's outcome says nothing ran.
func classifyNotRun(ctx context.Context, c *shim.Client, b []byte) (*nats.Msg, error) { // want classifyNotRun:`sends via \(\*shim.Client\).Request`
	for {
		m, err := c.Request(ctx, "s", b)
		if err == nil {
			return m, nil
		}
		if shim.Classify(err) != shim.OutcomeNotRun {
			return nil, err
		}
		time.Sleep(time.Second)
	}
}

// Retrying on an unknown outcome is a retry.
func classifyUnknown(ctx context.Context, c *shim.Client, b []byte) (*nats.Msg, error) { // want classifyUnknown:`sends via \(\*shim.Client\).Request`
	for {
		m, err := c.Request(ctx, "s", b) // want `call of \(\*shim.Client\).Request is retried on failure`
		if err == nil {
			return m, nil
		}
		if shim.Classify(err) != shim.OutcomeUnknown {
			return nil, err
		}
	}
}

// Near miss: a tagged switch on the outcome.
func classifySwitch(ctx context.Context, c *shim.Client, b []byte) (*nats.Msg, error) { // want classifySwitch:`sends via \(\*shim.Client\).Request`
	for {
		m, err := c.Request(ctx, "s", b)
		switch shim.Classify(err) {
		case shim.OutcomeOK:
			return m, nil
		case shim.OutcomeNotRun:
			continue
		}
		return nil, err
	}
}

// Near miss: MayHaveRun.
func mayHaveRun(ctx context.Context, c *shim.Client, b []byte) (*nats.Msg, error) { // want mayHaveRun:`sends via \(\*shim.Client\).Request`
	for {
		m, err := c.Request(ctx, "s", b)
		if err != nil && !shim.MayHaveRun(err) {
			continue
		}
		return m, err
	}
}

// Retrying whenever it may have run is a retry.
func mayHaveRunWrong(ctx context.Context, c *shim.Client, b []byte) (*nats.Msg, error) { // want mayHaveRunWrong:`sends via \(\*shim.Client\).Request`
	for {
		m, err := c.Request(ctx, "s", b) // want `call of \(\*shim.Client\).Request is retried on failure`
		if err != nil && shim.MayHaveRun(err) {
			continue
		}
		return m, err
	}
}

// Near miss: nats.go's own functions and the shim's connect are not
// sends, even though the stubs' bodies publish (as the real ones do).
func notSends(ctx context.Context, url string, m *nats.Msg, c *shim.Client) {
	for {
		if _, err := nats.Connect(url, nats.ReconnectBufSize(-1)); err == nil {
			break
		}
	}
	for {
		if _, err := shim.Connect(url); err == nil {
			break
		}
	}
	for i := 0; i < 3; i++ {
		if err := m.Ack(); err == nil {
			return
		}
	}
	for {
		if _, err := c.Limit(ctx); err == nil {
			return
		}
	}
}

// The shim's listed sends are named as called.
func shimListed(ctx context.Context, nc *nats.Conn, s *claimcheck.Store, m *nats.Msg) { // want shimListed:`sends via shim.PublishContext`
	for shim.PublishContext(ctx, nc, "x", nil) != nil { // want `^call of shim\.PublishContext is retried on failure: it may be out already; retry with shim\.Retry`
	}
	for {
		if _, err := s.Prepare(ctx, m, 0); err == nil { // want `^call of \(\*claimcheck.Store\).Prepare is retried on failure`
			return
		}
	}
}

// A local helper is named as called.
func send(nc *nats.Conn, b []byte) error { // want send:`sends via \(\*nats.Conn\).Request`
	_, err := nc.Request("s", b, time.Second)
	return err
}

func viaHelper(nc *nats.Conn, b []byte) error { // want viaHelper:`sends via \(\*nats.Conn\).Request`
	var err error
	for i := 0; i < 3; i++ {
		if err = send(nc, b); err == nil { // want `^call of send \(via \(\*nats\.Conn\)\.Request\) is retried on failure: it may have run; use a fixed shim\.OperationID the responder de-duplicates, and Attempts`
			return nil
		}
	}
	return err
}

// A function literal called on the spot.
func onTheSpot(nc *nats.Conn, b []byte) { // want onTheSpot:`sends via \(\*nats.Conn\).Publish`
	for i := 0; i < 3; i++ {
		err := func() error { return nc.Publish("s", b) }() // want `call of the function literal at line 316 in onTheSpot \(via \(\*nats.Conn\).Publish\) is retried on failure`
		if err == nil {
			return
		}
	}
}

// Near miss: a literal called on the spot that does not send.
func onTheSpotNoSend(nc *nats.Conn) {
	for i := 0; i < 3; i++ {
		err := func() error { return nc.Flush() }()
		if err == nil {
			return
		}
	}
}

func wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("orders: %w", err)
}

// The error wrapped before the test is still the send's error.
func wrapped(nc *nats.Conn, b []byte) { // want wrapped:`sends via \(\*nats.Conn\).Request`
	for {
		_, err := nc.Request("s", b, time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure`
		err = wrap(err)
		if err != nil {
			continue
		}
		return
	}
}

// Near miss: wrapped, then retried only on no responders.
func wrappedNoResponders(nc *nats.Conn, b []byte) { // want wrappedNoResponders:`sends via \(\*nats.Conn\).Request`
	for {
		_, err := nc.Request("s", b, time.Second)
		err = wrap(err)
		if errors.Is(err, nats.ErrNoResponders) {
			continue
		}
		return
	}
}

// A boolean holding the test.
func okVar(nc *nats.Conn, b []byte) { // want okVar:`sends via \(\*nats.Conn\).Request`
	for {
		_, err := nc.Request("s", b, time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure`
		ok := err == nil
		if ok {
			return
		}
	}
}

// Near miss: a boolean holding a test of no responders.
func okVarNoResponders(nc *nats.Conn, b []byte) { // want okVarNoResponders:`sends via \(\*nats.Conn\).Request`
	for {
		_, err := nc.Request("s", b, time.Second)
		again := errors.Is(err, nats.ErrNoResponders)
		if !again {
			return
		}
	}
}

// Near miss: a send expected to fail in a test, in a loop over rounds;
// t.Fatalf does not return.
func expectRefusal(t *testing.T, tb testing.TB, ctx context.Context, s *claimcheck.Store, nc *nats.Conn) { // want expectRefusal:`sends via \(\*claimcheck.Store\).PublishMsg`
	for i := 0; i < 3; i++ {
		err := s.PublishMsg(ctx, &nats.Msg{Subject: "cl"})
		if !errors.Is(err, claimcheck.ErrClosed) || !errors.Is(err, claimcheck.ErrNotPublished) {
			t.Fatalf("PublishMsg = %v", err)
		}
		if err := nc.Publish("x", nil); !errors.Is(err, nats.ErrMaxPayload) {
			tb.Fatalf("Publish = %v", err)
		}
		if err := nc.Publish("y", nil); err != nil {
			log.Print(err)
			os.Exit(1)
		}
	}
}

// A test that expects a failure but keeps going on success is a retry on
// that failure, unless the failure means nothing was sent.
func expectTimeout(tb testing.TB, nc *nats.Conn) { // want expectTimeout:`sends via \(\*nats.Conn\).Request`
	for i := 0; i < 3; i++ {
		if _, err := nc.Request("x", nil, time.Second); !errors.Is(err, nats.ErrTimeout) { // want `call of \(\*nats.Conn\).Request is retried on failure`
			tb.Fatal(err)
		}
	}
}
