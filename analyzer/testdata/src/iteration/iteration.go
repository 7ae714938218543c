// Package iteration holds loops that send again: retries of the same // want package:"uses nats.go"
// operation, each beside the iteration, pagination or periodic send that
// looks like it.
package iteration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

type order struct {
	ID    string `json:"id"`
	Items []string
}

// Try the next server: the same request to another connection is a retry,
// the first server may have run it.
func createOnAnyServer(conns map[string]*nats.Conn, servers []string, body []byte) (*nats.Msg, error) { // want createOnAnyServer:`sends via \(\*nats\.Conn\)\.Request`
	var lastErr error
	for _, url := range servers {
		nc := conns[url]
		reply, err := nc.Request("orders.create", body, 2*time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure`
		if err == nil {
			return reply, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// Near miss: the same loop shape over orders: each failure moves on to
// another body.
func createEach(nc *nats.Conn, orders []order) error { // want createEach:`sends via \(\*nats\.Conn\)\.Request`
	var failed int
	for _, o := range orders {
		body, _ := json.Marshal(o)
		if _, err := nc.Request("orders.create", body, 2*time.Second); err != nil {
			failed++
			continue
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d orders failed", failed)
	}
	return nil
}

// Another region: the same body to another subject is a retry.
func publishToAnyRegion(nc *nats.Conn, regions []string, evt []byte) error { // want publishToAnyRegion:`sends via \(\*nats\.Conn\)\.Publish`
	for _, region := range regions {
		if err := nc.Publish("events."+region, evt); err == nil { // want `call of \(\*nats.Conn\).Publish is retried on failure`
			return nil
		}
	}
	return errors.New("no region took the event")
}

// Conformance loop: every case sends another body and returns unless the
// error is the expected one.
func checkRejections(ctx context.Context, js jetstream.JetStream, cases []struct { // want checkRejections:`sends via \(jetstream\.Publisher\)\.Publish`
	subject string
	payload []byte
	want    error
}) error {
	for _, tc := range cases {
		_, err := js.Publish(ctx, tc.subject, tc.payload)
		if !errors.Is(err, tc.want) {
			return fmt.Errorf("%s: got %v, want %v", tc.subject, err, tc.want)
		}
	}
	return nil
}

// Conformance loop with one payload: the subjects vary, and a request
// that succeeds is the failure being tested for.
func checkBadSubjects(nc *nats.Conn, subjects []string) error { // want checkBadSubjects:`sends via \(\*nats\.Conn\)\.Request`
	for _, subj := range subjects {
		_, err := nc.Request(subj, nil, time.Second)
		if err == nil {
			return fmt.Errorf("%s: accepted, want a rejection", subj)
		}
		if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, nats.ErrTimeout) {
			return err
		}
	}
	return nil
}

// Pagination: the cursor comes from the reply, so each request asks for
// another page.
func listAll(nc *nats.Conn) ([]string, error) { // want listAll:`sends via \(\*nats\.Conn\)\.Request`
	var all []string
	cursor := ""
	for {
		reply, err := nc.Request("orders.list", []byte(cursor), time.Second)
		if err != nil {
			return nil, err
		}
		var page struct {
			IDs  []string
			Next string
		}
		if err := json.Unmarshal(reply.Data, &page); err != nil {
			return nil, err
		}
		all = append(all, page.IDs...)
		if page.Next == "" {
			return all, nil
		}
		cursor = page.Next
	}
}

// Near miss of pagination: a page that timed out is asked for again.
func listAllRetrying(nc *nats.Conn) ([]string, error) { // want listAllRetrying:`sends via \(\*nats\.Conn\)\.Request`
	var all []string
	cursor := ""
	for {
		reply, err := nc.Request("orders.list", []byte(cursor), time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure`
		if err != nil {
			log.Printf("page %q: %v, asking again", cursor, err)
			continue
		}
		var page struct {
			IDs  []string
			Next string
		}
		_ = json.Unmarshal(reply.Data, &page)
		all = append(all, page.IDs...)
		if page.Next == "" {
			return all, nil
		}
		cursor = page.Next
	}
}

// A flag and a counter: the success sets the flag, which ends the loop.
func publishWithFlag(nc *nats.Conn, data []byte) bool { // want publishWithFlag:`sends via \(\*nats\.Conn\)\.Publish`
	sent, tries := false, 0
	for !sent && tries < 3 {
		if err := nc.Publish("audit", data); err == nil { // want `call of \(\*nats.Conn\).Publish is retried on failure`
			sent = true
		}
		tries++
	}
	return sent
}

// The same with the flag in a three-clause loop.
func publishWithFlagFor(nc *nats.Conn, data []byte) { // want publishWithFlagFor:`sends via \(\*nats\.Conn\)\.Publish`
	var done bool
	for attempt := 0; attempt < 5 && !done; attempt++ {
		err := nc.Publish("audit", data) // want `call of \(\*nats.Conn\).Publish is retried on failure`
		if err != nil {
			time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
			continue
		}
		done = true
	}
}

// Near miss: a periodic publish whose flag is set by a stop signal, not by
// success: the same message goes out after a success too.
func heartbeat(nc *nats.Conn, stop <-chan struct{}, beat []byte) { // want heartbeat:`sends via \(\*nats\.Conn\)\.Publish`
	stopped := false
	for !stopped {
		if err := nc.Publish("svc.heartbeat", beat); err != nil {
			log.Print(err)
		}
		select {
		case <-stop:
			stopped = true
		case <-time.After(5 * time.Second):
		}
	}
}

// Near miss: a heartbeat on a ticker.
func heartbeatTicker(nc *nats.Conn, t *time.Ticker, beat []byte) { // want heartbeatTicker:`sends via \(\*nats\.Conn\)\.Publish`
	for range t.C {
		if err := nc.Publish("svc.heartbeat", beat); err != nil {
			log.Print(err)
			continue
		}
	}
}

// No reply yet: requesting until a reply arrives is a retry even when the
// error is dropped.
func untilReply(nc *nats.Conn, req []byte) *nats.Msg { // want untilReply:`sends via \(\*nats\.Conn\)\.Request`
	var msg *nats.Msg
	for msg == nil {
		msg, _ = nc.Request("svc.price", req, time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure`
	}
	return msg
}

// Near miss: one request per item, the error dropped.
func pricesOf(nc *nats.Conn, items [][]byte) []*nats.Msg { // want pricesOf:`sends via \(\*nats\.Conn\)\.Request`
	var out []*nats.Msg
	for _, it := range items {
		msg, _ := nc.Request("svc.price", it, time.Second)
		if msg == nil {
			continue
		}
		out = append(out, msg)
	}
	return out
}

// Publish, wait for the answer on a subscription, publish again when none
// came: the first publish may have been delivered.
func askUntilAnswered(nc *nats.Conn, sub *nats.Subscription, inbox string, q []byte) (*nats.Msg, error) { // want askUntilAnswered:`sends via \(\*nats\.Conn\)\.PublishRequest`
	for i := 0; i < 3; i++ {
		if err := nc.PublishRequest("svc.ask", inbox, q); err != nil { // want `call of \(\*nats.Conn\).PublishRequest is retried on failure`
			return nil, err
		}
		msg, err := sub.NextMsg(time.Second)
		if err != nil {
			continue
		}
		return msg, nil
	}
	return nil, errors.New("no answer")
}

// Near miss: a publish and a receive per item, stopping at the first
// missing answer.
func askEach(nc *nats.Conn, sub *nats.Subscription, inbox string, qs [][]byte) error { // want askEach:`sends via \(\*nats\.Conn\)\.PublishRequest`
	for _, q := range qs {
		if err := nc.PublishRequest("svc.ask", inbox, q); err != nil {
			return err
		}
		if _, err := sub.NextMsg(time.Second); err != nil {
			return err
		}
	}
	return nil
}

// Busy and timeout both loop: the timeout path sends again a request that
// may have run, so it is a retry.
func reserveBusyOrTimeout(nc *nats.Conn, req []byte) (*nats.Msg, error) { // want reserveBusyOrTimeout:`sends via \(\*nats\.Conn\)\.Request`
	for i := 0; i < 5; i++ {
		msg, err := nc.Request("stock.reserve", req, time.Second) // want `call of \(\*nats.Conn\).Request is retried on failure`
		if err != nil {
			continue
		}
		if string(msg.Data) == "busy" {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		return msg, nil
	}
	return nil, errors.New("gave up")
}

// Near miss: only a "busy" answer loops; the responder said it did not
// run the request.
func reserveBusyOnly(nc *nats.Conn, req []byte) (*nats.Msg, error) { // want reserveBusyOnly:`sends via \(\*nats\.Conn\)\.Request`
	for i := 0; i < 5; i++ {
		msg, err := nc.Request("stock.reserve", req, time.Second)
		if err != nil {
			return nil, err
		}
		if string(msg.Data) == "busy" {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		return msg, nil
	}
	return nil, errors.New("still busy")
}

// A header that changes per attempt (a trace ID) does not make another
// operation.
func publishTraced(nc *nats.Conn, body []byte, trace func() string) error { // want publishTraced:`sends via \(\*nats\.Conn\)\.PublishMsg`
	for i := 0; i < 3; i++ {
		m := &nats.Msg{Subject: "orders", Data: body, Header: nats.Header{"Trace-Id": {trace()}}}
		if err := nc.PublishMsg(m); err == nil { // want `call of \(\*nats.Conn\).PublishMsg is retried on failure`
			return nil
		}
	}
	return errors.New("not published")
}

// Near miss: a message built per attempt number in its body is another
// message each time (a probe sequence).
func probe(nc *nats.Conn) { // want probe:`sends via \(\*nats\.Conn\)\.Publish`
	for seq := 0; seq < 3; seq++ {
		body := []byte(fmt.Sprint("probe ", seq))
		if err := nc.Publish("probe", body); err == nil {
			return
		}
	}
}

// Success ends the loop through os.Exit and log.Fatal too.
func sendOrDie(nc *nats.Conn, data []byte) { // want sendOrDie:`sends via \(\*nats\.Conn\)\.Publish`
	for {
		err := nc.Publish("boot", data) // want `call of \(\*nats.Conn\).Publish is retried on failure`
		if err == nil {
			log.Print("announced")
			os.Exit(0)
		}
	}
}

// Near miss: the success path ends the program, the failure path moves
// on to the next announcement.
func announceEach(nc *nats.Conn, anns [][]byte) { // want announceEach:`sends via \(\*nats\.Conn\)\.Publish`
	for _, a := range anns {
		if err := nc.Publish("boot", a); err == nil {
			log.Fatal("announced, exiting")
		}
	}
}

// fatalf does not return: its last call exits.
func fatalf(format string, args ...any) { // want fatalf:`does not return`
	log.Printf(format, args...)
	os.Exit(1)
}

// A success path ended by a function of the package that does not return.
func announceOrDie(nc *nats.Conn, data []byte) { // want announceOrDie:`sends via \(\*nats\.Conn\)\.Publish`
	for {
		if err := nc.Publish("boot", data); err == nil { // want `call of \(\*nats.Conn\).Publish is retried on failure`
			fatalf("announced %d bytes", len(data))
		}
	}
}

// logf returns: the success path loops too, a periodic send.
func logf(format string, args ...any) { log.Printf(format, args...) }

func announceForever(nc *nats.Conn, data []byte) { // want announceForever:`sends via \(\*nats\.Conn\)\.Publish`
	for {
		if err := nc.Publish("boot", data); err == nil {
			logf("announced %d bytes", len(data))
		}
	}
}

// A retry nested in a batch over targets: each message's ack goes to its
// own reply subject with the same body; a failed ack is sent again.
func ackAll(nc *nats.Conn, msgs []*nats.Msg) { // want ackAll:`sends via \(\*nats\.Conn\)\.Request`
	for _, m := range msgs {
		for i := 0; i < 10; i++ {
			if _, err := nc.Request(m.Reply, []byte("+ACK"), 500*time.Millisecond); err == nil { // want `call of \(\*nats.Conn\).Request is retried on failure`
				break
			}
		}
	}
}

// Near miss: a fan-out of the same body to every connection, logging
// failures: each target once.
func broadcast(conns []*nats.Conn, evt []byte) { // want broadcast:`sends via \(\*nats\.Conn\)\.Publish`
	for _, nc := range conns {
		if err := nc.Publish("config.changed", evt); err != nil {
			log.Print(err)
			continue
		}
	}
}
