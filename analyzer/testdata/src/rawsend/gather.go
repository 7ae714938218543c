package rawsend // want package:"uses nats.go"

import (
	"time"

	"github.com/nats-io/nats.go"
)

// A hand-rolled request for one reply: (*shim.Client).Request does it.
func askOne(nc *nats.Conn, q []byte) (*nats.Msg, error) { // want askOne:`sends via \(\*nats.Conn\).PublishRequest`
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	_ = sub.AutoUnsubscribe(1)
	if err := nc.PublishRequest("svc.ask", inbox, q); err != nil { // want `raw \(\*nats\.Conn\)\.PublishRequest hand-rolls a request with no deadline or size cap: use \(\*shim\.Client\)\.Request$`
		return nil, err
	}
	return sub.NextMsg(time.Second)
}

// Scatter-gather: every server answers the ping, up to n of them.
func pingAll(nc *nats.Conn, n int) ([]*nats.Msg, error) { // want pingAll:`sends via \(\*nats.Conn\).PublishRequest`
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	_ = sub.AutoUnsubscribe(n)
	if err := nc.PublishRequest("$SYS.REQ.SERVER.PING", inbox, nil); err != nil { // want `raw \(\*nats\.Conn\)\.PublishRequest gathers replies with no deadline or size cap: use \(\*shim\.Client\)\.RequestMany, or //natssend:reviewed <reason>`
		return nil, err
	}
	var got []*nats.Msg
	for range n {
		m, err := sub.NextMsg(time.Second)
		if err != nil {
			break
		}
		got = append(got, m)
	}
	return got, nil
}

// Collecting replies in a loop until a quiet gap.
func collect(nc *nats.Conn) []*nats.Msg { // want collect:`sends via \(\*nats.Conn\).PublishRequest`
	inbox := nc.NewInbox()
	sub, _ := nc.SubscribeSync(inbox)
	_ = nc.PublishRequest("svc.discover", inbox, nil) // want `PublishRequest gathers replies`
	var got []*nats.Msg
	for {
		m, err := sub.NextMsg(100 * time.Millisecond)
		if err != nil {
			return got
		}
		got = append(got, m)
	}
}

// A long-lived reply subject: replies arrive at a subscription made
// elsewhere.
type agent struct {
	nc      *nats.Conn
	replies string
}

func (a *agent) ask(q []byte) error { // want ask:`sends via \(\*nats.Conn\).PublishRequest`
	return a.nc.PublishRequest("svc.ask", a.replies, q) // want `PublishRequest sends to a long-lived reply subject with no size cap: use \(\*shim\.Client\)\.RequestMany`
}

// Near miss: one request per round, each with its own inbox and one reply.
func askRounds(nc *nats.Conn, qs [][]byte) { // want askRounds:`sends via \(\*nats.Conn\).PublishRequest`
	for _, q := range qs {
		inbox := nats.NewInbox()
		sub, _ := nc.SubscribeSync(inbox)
		_ = nc.PublishRequest("svc.ask", inbox, q) // want `PublishRequest hand-rolls a request with no deadline or size cap: use \(\*shim\.Client\)\.Request$`
		_, _ = sub.NextMsg(time.Second)
	}
}

func (a *agent) voteSubject(id string) string { return "vote." + id }

// A vote gathered from the cluster on a subject of its own.
func (a *agent) requestVote(id string, size int, vr []byte) error { // want requestVote:`sends via \(\*nats.Conn\).PublishRequest`
	inbox := a.voteSubject(id)
	sub, err := a.nc.Subscribe(inbox, func(*nats.Msg) {})
	if err != nil {
		return err
	}
	if size > 0 {
		_ = sub.AutoUnsubscribe(size)
	}
	return a.nc.PublishRequest("vote.req", inbox, vr) // want `PublishRequest gathers replies`
}
