// Package realcode holds shapes seen in public code that uses nats.go,
// each beside the near miss that must stay as it is.
package realcode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/nats-io/nats.go"

	"pace"
)

// groupInfo is what the info request returns, by value.
type groupInfo struct {
	Leader   string
	Replicas int
}

type admin struct{ nc *nats.Conn }

func (a *admin) info(group string) (groupInfo, error) { // want info:`sends via \(\*nats\.Conn\)\.Request`
	var gi groupInfo
	m, err := a.nc.Request("$ADMIN.INFO."+group, nil, time.Second)
	if err != nil {
		return gi, err
	}
	return gi, json.Unmarshal(m.Data, &gi)
}

// After a step-down, wait for another leader: an error asks again, and so
// does an answer naming the old leader. The error path sends again a
// request that may have run (the "busy" rule), the reply being a struct
// as much as with a pointer.
func awaitNewLeader(a *admin, group, old string) error { // want awaitNewLeader:`sends via \(\*nats\.Conn\)\.Request`
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for n := 0; n < 20; n++ {
		<-tick.C
		gi, err := a.info(group) // want `call of \(\*admin\)\.info \(via \(\*nats\.Conn\)\.Request\) is retried on failure`
		if err != nil {
			log.Printf("info: %v", err)
			continue
		}
		if gi.Leader != old {
			return nil
		}
	}
	return errors.New("no new leader in time")
}

// Near miss: a dashboard that draws every answer and asks again on a
// timer, after a success as after an error: a periodic request.
func watchGroup(ctx context.Context, a *admin, group string, draw func(groupInfo)) error { // want watchGroup:`sends via \(\*nats\.Conn\)\.Request`
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			gi, err := a.info(group)
			if err != nil {
				continue
			}
			draw(gi)
		}
	}
}

// A responder loop answering every request with one canned reply: a
// timeout waits for the next request, it does not make the last reply a
// failure, so the reply to the next request is not a retry.
func serveCanned(nc *nats.Conn, sub *nats.Subscription, canned []byte) error { // want serveCanned:`sends via \(\*nats\.Conn\)\.Publish`
	for {
		req, err := sub.NextMsg(10 * time.Second)
		if err == nats.ErrTimeout {
			continue
		}
		if err == nats.ErrConnectionClosed {
			return nil
		}
		if err != nil {
			return err
		}
		body := req.Data
		if canned != nil {
			body = canned
		}
		if req.Reply == "" {
			log.Printf("%s: no reply subject, dropped", req.Subject)
			continue
		}
		if err := nc.Publish(req.Reply, body); err != nil {
			return fmt.Errorf("reply to %s: %w", req.Subject, err)
		}
	}
}

// Near miss: publish, wait a moment for the echo, publish again when none
// came: the first publish may have been delivered.
func probeEcho(nc *nats.Conn, echo *nats.Subscription) (*nats.Msg, error) { // want probeEcho:`sends via \(\*nats\.Conn\)\.Publish`
	deadline := time.Now().Add(3 * time.Second)
	var got *nats.Msg
	var err error
	for time.Now().Before(deadline) {
		if err := nc.Publish("edge.echo", []byte("ping")); err != nil { // want `call of \(\*nats\.Conn\)\.Publish is retried on failure`
			return nil, err
		}
		if got, err = echo.NextMsg(200 * time.Millisecond); err == nil {
			break
		}
	}
	return got, err
}

type consumerSpec struct {
	Durable      string
	DeliverInbox string
}

type feed struct {
	nc   *nats.Conn
	spec consumerSpec
	sub  *nats.Subscription
}

func (f *feed) createConsumer(spec consumerSpec) error { // want createConsumer:`sends via \(\*nats\.Conn\)\.Request`
	b, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	_, err = f.nc.Request("$JS.API.CONSUMER.CREATE.EVENTS", b, 2*time.Second)
	return err
}

func (f *feed) deleteConsumer() error { // want deleteConsumer:`sends via \(\*nats\.Conn\)\.Request`
	_, err := f.nc.Request("$JS.API.CONSUMER.DELETE.EVENTS."+f.spec.Durable, nil, 2*time.Second)
	return err
}

// An in-house helper method of another package that passes the attempt
// number to its function retries it: the consumer create may have run
// when it timed out. The cleanup before it discards its error and is not
// judged.
func (f *feed) attach(ctx context.Context) error {
	return pace.Standard.Until(ctx, func(attempt int) error {
		if f.sub != nil {
			_ = f.deleteConsumer()
			_ = f.sub.Unsubscribe()
		}
		var err error
		f.sub, err = f.nc.SubscribeSync(f.nc.NewRespInbox())
		if err != nil {
			return err
		}
		f.spec.DeliverInbox = f.sub.Subject
		log.Printf("attach, attempt %d", attempt)
		return f.createConsumer(f.spec) // want `call of \(\*feed\)\.createConsumer \(via \(\*nats\.Conn\)\.Request\) is retried on failure by \(pace\.Steps\)\.Until`
	})
}

// Near miss: a helper that runs its function once per index is
// iteration, failures or not.
func (f *feed) announceShards(n int) int {
	return pace.Standard.Each(n, func(i int) error {
		return f.nc.Publish(fmt.Sprintf("shards.%d.hello", i), nil)
	})
}

// errNoSlot says the slot stream is full: the stream refused to store
// the claim (JetStream error 10077), so nothing was stored.
var errNoSlot = errors.New("no free slot")

type pubAck struct {
	Error *struct {
		Code int `json:"err_code"`
	} `json:"error"`
	Seq uint64 `json:"seq"`
}

// Claim a slot by publishing to a stream as a request. A timeout returns
// at once (the claim may be stored); only the stream's refusal, read
// from the ack, comes back as errNoSlot and is tried again.
func claimSlot(ctx context.Context, nc *nats.Conn, pool, owner string) (uint64, error) {
	var seq uint64
	claim := func() error {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		m, err := nc.RequestWithContext(ctx, "slots."+pool, []byte(owner))
		if err != nil {
			return err
		}
		var ack pubAck
		if err := json.Unmarshal(m.Data, &ack); err != nil {
			return err
		}
		if ack.Error != nil && ack.Error.Code == 10077 {
			return errNoSlot
		}
		seq = ack.Seq
		return nil
	}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		err := claim()
		if err == nil {
			return seq, nil
		}
		if err != errNoSlot {
			return 0, err
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// errBusy is returned on a refusal and on a timeout alike.
var errBusy = errors.New("busy")

// Near miss: the same loop, but the sentinel also stands for a timeout,
// after which the request may have run.
func claimSlotLoose(ctx context.Context, nc *nats.Conn, pool, owner string) error {
	claim := func() error {
		m, err := nc.RequestWithContext(ctx, "slots."+pool, []byte(owner))
		if errors.Is(err, nats.ErrTimeout) {
			return errBusy
		}
		if err != nil {
			return err
		}
		var ack pubAck
		if err := json.Unmarshal(m.Data, &ack); err != nil {
			return err
		}
		if ack.Error != nil {
			return errBusy
		}
		return nil
	}
	for i := 0; i < 10; i++ {
		err := claim() // want `call of claim \(via \(\*nats\.Conn\)\.RequestWithContext\) is retried on failure`
		if err == nil {
			return nil
		}
		if !errors.Is(err, errBusy) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errBusy
}

// Near miss: errNoSlot read right, but the loop repeats on every other
// error too.
func claimSlotAnyError(ctx context.Context, nc *nats.Conn, pool, owner string) error {
	claim := func() error {
		m, err := nc.RequestWithContext(ctx, "slots."+pool, []byte(owner))
		if err != nil {
			return err
		}
		if len(m.Data) == 0 {
			return errNoSlot
		}
		return nil
	}
	var err error
	for i := 0; i < 10; i++ {
		if err = claim(); err == nil { // want `call of claim \(via \(\*nats\.Conn\)\.RequestWithContext\) is retried on failure`
			return nil
		}
	}
	return err
}

type pinger struct{ nc *nats.Conn }

// gather sends one ping and collects up to want answers.
func (p *pinger) gather(ctx context.Context, subj string, want int) ([]*nats.Msg, error) { // want gather:`sends via \(\*nats\.Conn\)\.PublishRequest`
	inbox := p.nc.NewRespInbox()
	sub, err := p.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	if err := p.nc.PublishRequest(subj, inbox, nil); err != nil {
		return nil, err
	}
	var out []*nats.Msg
	for len(out) < want {
		m, err := sub.NextMsg(100 * time.Millisecond)
		if err != nil {
			break
		}
		out = append(out, m)
	}
	return out, nil
}

// Wait until every server answers: an error asks again, and so do too few
// answers, tested in the same condition as the error. The error path sends
// again what may have run (the "busy" rule).
func awaitAllServers(ctx context.Context, p *pinger, want int) error { // want awaitAllServers:`sends via \(\*nats\.Conn\)\.PublishRequest`
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := p.gather(ctx, "$SYS.REQ.SERVER.PING", want) // want `call of \(\*pinger\)\.gather \(via \(\*nats\.Conn\)\.PublishRequest\) is retried on failure`
		if err == nil && len(got) == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d servers answered", len(got), want)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Near miss: the same wait that gives up on an error and asks again only
// after an answer: a poll, not a retry.
func awaitAllServersStrict(ctx context.Context, p *pinger, want int) error { // want awaitAllServersStrict:`sends via \(\*nats\.Conn\)\.PublishRequest`
	for {
		got, err := p.gather(ctx, "$SYS.REQ.SERVER.PING", want)
		if err != nil {
			return err
		}
		if len(got) == want {
			return nil
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Near miss of awaitAllServers: pull the next message of a work queue n
// times. Testing the reply against nil is the outcome, not a look at what
// it says, so the success path asks again too: a periodic request.
func drainQueue(nc *nats.Conn, next string, n int) int { // want drainQueue:`sends via \(\*nats\.Conn\)\.Request`
	got := 0
	for i := 0; i < n; i++ {
		msg, err := nc.Request(next, nil, time.Second)
		logFailure(err)
		if msg != nil {
			got++
		}
	}
	return got
}

func logFailure(err error) {
	if err != nil {
		log.Printf("pull: %v", err)
	}
}
