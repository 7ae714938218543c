package retry

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

// Counted loop that breaks on success.
func countedBreak(c *shim.Client, ctx context.Context) (*nats.Msg, error) { // want countedBreak:`sends via \(\*shim.Client\).Request`
	var err error
	for i := 0; i < 3; i++ {
		var reply *nats.Msg
		reply, err = c.Request(ctx, "svc", nil) // want `^call of \(\*shim\.Client\)\.Request is retried on failure: it may have run; use a fixed shim\.OperationID the responder de-duplicates, and Attempts \(docs/checks\.md#operation-ids\)$`
		if err == nil {
			return reply, nil
		}
		time.Sleep(time.Second)
	}
	return nil, err
}

// Near miss: a counted loop over items that stops at the first failure.
func countedStopOnFailure(nc *nats.Conn, items [][]byte) error { // want countedStopOnFailure:`sends via shim.Publish`
	for i := 0; i < len(items); i++ {
		if err := shim.Publish(nc, "items", items[i]); err != nil {
			return err
		}
	}
	return nil
}

// for {} with continue on error.
func forContinue(nc *nats.Conn, data []byte) { // want forContinue:`sends via shim.Publish`
	for {
		if err := shim.Publish(nc, "a", data); err != nil { // want `call of shim.Publish is retried on failure`
			log.Print(err)
			continue
		}
		break
	}
}

// Near miss: a work loop that continues after failures and successes alike.
func forWorkLoop(nc *nats.Conn, next func() []byte) { // want forWorkLoop:`sends via shim.Publish`
	for {
		data := next()
		if data == nil {
			return
		}
		if err := shim.Publish(nc, "a", data); err != nil {
			log.Print(err)
			continue
		}
		log.Print("sent")
	}
}

// goto retry.
func gotoRetry(nc *nats.Conn, m *nats.Msg) error { // want gotoRetry:`sends via shim.Respond`
	attempts := 0
retry:
	err := shim.Respond(m, nil, nil) // want `call of shim\.Respond is retried on failure: it may have been written; reply once`
	if err != nil && attempts < 3 {
		attempts++
		goto retry
	}
	return err
}

// Near miss: goto to the end on failure.
func gotoDone(nc *nats.Conn, m *nats.Msg) (err error) { // want gotoDone:`sends via shim.Respond`
	err = shim.Respond(m, nil, nil)
	if err != nil {
		goto done
	}
	log.Print("replied")
done:
	return err
}

// for err != nil { err = send() }.
func whileError(nc *nats.Conn) error { // want whileError:`sends via \(\*nats.Conn\).Publish`
	err := nc.Publish("a", nil)
	for err != nil {
		err = nc.Publish("a", nil) // want `call of \(\*nats.Conn\).Publish is retried on failure`
	}
	return err
}

// Near miss: keep sending while it works.
func whileOK(nc *nats.Conn) error { // want whileOK:`sends via \(\*nats.Conn\).Publish`
	var err error
	for err == nil {
		err = nc.Publish("a", nil)
	}
	return err
}

// A loop conditioned on errors.Is, and && in the condition.
func whileTimeout(c *shim.Client, ctx context.Context) error { // want whileTimeout:`sends via \(\*shim.Client\).Request`
	_, err := c.Request(ctx, "a", nil)
	for n := 0; errors.Is(err, nats.ErrTimeout) && n < 3; n++ {
		_, err = c.Request(ctx, "a", nil) // want `call of \(\*shim.Client\).Request is retried on failure`
	}
	return err
}

// Near miss: repeating on no responders is safe, nothing received the request.
func whileNoResponders(c *shim.Client, ctx context.Context) error { // want whileNoResponders:`sends via \(\*shim.Client\).Request`
	_, err := c.Request(ctx, "a", nil)
	for n := 0; errors.Is(err, nats.ErrNoResponders) && n < 3; n++ {
		_, err = c.Request(ctx, "a", nil)
	}
	return err
}

// Retry on one specific error, with a switch and a labelled continue.
func retrySpecific(c *shim.Client, ctx context.Context) (*nats.Msg, error) { // want retrySpecific:`sends via \(\*shim.Client\).Request`
attempts:
	for i := 0; i < 5; i++ {
		reply, err := c.Request(ctx, "a", nil) // want `call of \(\*shim.Client\).Request is retried on failure`
		switch {
		case errors.Is(err, nats.ErrTimeout):
			continue attempts
		case err != nil:
			return nil, err
		}
		return reply, nil
	}
	return nil, errors.New("gave up")
}

// Near miss: the same shape on ErrNoResponders.
func retryNoResponders(c *shim.Client, ctx context.Context) (*nats.Msg, error) { // want retryNoResponders:`sends via \(\*shim.Client\).Request`
attempts:
	for i := 0; i < 5; i++ {
		reply, err := c.Request(ctx, "a", nil)
		switch {
		case err == nats.ErrNoResponders:
			continue attempts
		case err != nil:
			return nil, err
		}
		return reply, nil
	}
	return nil, errors.New("gave up")
}

// || in the condition: retry unless the error is permanent.
func retryOr(nc *nats.Conn, permanent func(error) bool) error { // want retryOr:`sends via shim.Publish`
	for i := 0; ; i++ {
		err := shim.Publish(nc, "a", nil) // want `call of shim.Publish is retried on failure`
		if err == nil || permanent(err) || i > 3 {
			return err
		}
	}
}

// Near miss: range over items, logging failures.
func rangeItems(nc *nats.Conn, items [][]byte) { // want rangeItems:`sends via shim.Publish`
	for _, it := range items {
		if err := shim.Publish(nc, "a", it); err != nil {
			log.Printf("publish: %v", err)
			continue
		}
	}
}

// Near miss: a loop that ignores the error.
func ignoreError(nc *nats.Conn) { // want ignoreError:`sends via shim.Publish`
	for i := 0; i < 3; i++ {
		_ = shim.Publish(nc, "a", nil)
	}
}

// Near miss: log.Fatal does not return.
func fatal(nc *nats.Conn) { // want fatal:`sends via shim.Publish`
	for i := 0; i < 3; i++ {
		if err := shim.Publish(nc, "a", nil); err != nil {
			log.Fatal(err)
		}
	}
}

// Recursive retry.
func recursive(nc *nats.Conn, n int) error { // want recursive:`sends via shim.Publish`
	if err := shim.Publish(nc, "a", nil); err != nil { // want `call of shim.Publish is retried on failure by calling recursive again`
		if n > 0 {
			return recursive(nc, n-1)
		}
		return err
	}
	return nil
}

// Near miss: recursion on success walks a list.
func recursiveList(nc *nats.Conn, items [][]byte) error { // want recursiveList:`sends via shim.Publish`
	if len(items) == 0 {
		return nil
	}
	if err := shim.Publish(nc, "a", items[0]); err != nil {
		return err
	}
	return recursiveList(nc, items[1:])
}

// A closure called in a loop is a send too.
func closureLoop(nc *nats.Conn) error {
	send := func() error { return shim.Publish(nc, "a", nil) }
	for i := 0; i < 3; i++ {
		if err := send(); err == nil { // want `^call of send \(via shim\.Publish\) is retried on failure: it may be out already; retry with shim\.Retry`
			return nil
		}
	}
	return errors.New("failed")
}

// The error kept in a variable captured by a closure.
func captured(nc *nats.Conn) (err error) { // want captured:`sends via shim.Publish`
	defer func() {
		if err != nil {
			log.Print(err)
		}
	}()
	for i := 0; i < 3; i++ {
		err = shim.Publish(nc, "a", nil) // want `call of shim.Publish is retried on failure`
		if err == nil {
			return nil
		}
	}
	return err
}

// JetStream: a message ID fixed outside the loop makes the repeat safe.
func jsFixedID(ctx context.Context, js jetstream.JetStream, orderID string) error { // want jsFixedID:`sends via \(jetstream.Publisher\).Publish`
	id := "order-" + orderID
	var err error
	for i := 0; i < 3; i++ {
		if _, err = js.Publish(ctx, "orders", nil, jetstream.WithMsgID(id)); err == nil {
			return nil
		}
	}
	return err
}

// JetStream: an ID derived only from fixed values inside the loop.
func jsDerivedID(ctx context.Context, js jetstream.JetStream, orderID int) error { // want jsDerivedID:`sends via \(jetstream.Publisher\).Publish`
	for {
		_, err := js.Publish(ctx, "orders", nil, jetstream.WithMsgID(fmt.Sprintf("order-%d", orderID)))
		if err == nil {
			return nil
		}
	}
}

// JetStream: the ID changes on every attempt, no de-duplication.
func jsFreshID(ctx context.Context, js jetstream.JetStream, next func() string) error { // want jsFreshID:`sends via \(jetstream.Publisher\).Publish`
	for {
		_, err := js.Publish(ctx, "orders", nil, jetstream.WithMsgID(next())) // want `call of \(jetstream\.Publisher\)\.Publish is retried on failure: it may be stored; fix its ID with jetstream\.WithMsgID`
		if err == nil {
			return nil
		}
	}
}

// JetStream without an ID.
func jsNoID(js nats.JetStreamContext) error { // want jsNoID:`sends via \(nats.JetStream\).Publish`
	for {
		_, err := js.Publish("orders", nil) // want `call of \(nats.JetStream\).Publish is retried on failure`
		if err == nil {
			return nil
		}
	}
}

// Legacy JetStream with nats.MsgId.
func jsLegacyID(js nats.JetStreamContext, id string) error { // want jsLegacyID:`sends via \(nats.JetStream\).Publish`
	for {
		if _, err := js.Publish("orders", nil, nats.MsgId(id)); err == nil {
			return nil
		}
	}
}

// The Nats-Msg-Id header set outside the loop, claim checks on top.
func jsHeader(ctx context.Context, s *claimcheck.Store, id string) error { // want jsHeader:`sends via \(\*claimcheck.Store\).PublishJetStream`
	m := nats.NewMsg("orders")
	m.Header.Set(nats.MsgIdHdr, id)
	for {
		if _, err := s.PublishJetStream(ctx, m); err == nil {
			return nil
		}
	}
}

// The header set by a literal inside the loop, from a fixed value.
func jsHeaderLiteral(ctx context.Context, s *claimcheck.Store, id string) error { // want jsHeaderLiteral:`sends via \(\*claimcheck.Store\).PublishJetStream`
	for {
		m := &nats.Msg{Subject: "orders", Header: nats.Header{"Nats-Msg-Id": []string{id}}}
		if _, err := s.PublishJetStream(ctx, m); err == nil {
			return nil
		}
	}
}

// Near miss for the header rule: a core publish has no de-duplication.
func coreWithHeader(nc *nats.Conn, id string) error { // want coreWithHeader:`sends via shim.PublishMsg`
	m := nats.NewMsg("orders")
	m.Header.Set(nats.MsgIdHdr, id)
	for {
		if err := shim.PublishMsg(nc, m); err == nil { // want `call of shim.PublishMsg is retried on failure`
			return nil
		}
	}
}

// A go statement cannot observe the error: not a retry.
func goSend(nc *nats.Conn) { // want goSend:`sends via shim.Publish`
	for i := 0; i < 3; i++ {
		go shim.Publish(nc, "a", nil)
	}
}

// Near miss: only one specific error is tested and the other outcomes,
// success included, loop as well.
func loopOverSizes(nc *nats.Conn, sizes []int) { // want loopOverSizes:`sends via shim.Publish`
	for _, n := range sizes {
		err := shim.Publish(nc, "a", make([]byte, n))
		if errors.Is(err, nats.ErrTimeout) {
			log.Print("timeout")
		}
	}
}

// Near miss: repeating after the shim refused an oversized payload.
func shrinkOnRefusal(nc *nats.Conn, data []byte) error { // want shrinkOnRefusal:`sends via shim.Publish`
	for {
		err := shim.Publish(nc, "a", data)
		if !errors.Is(err, nats.ErrMaxPayload) {
			return err
		}
		data = data[:len(data)/2]
	}
}
