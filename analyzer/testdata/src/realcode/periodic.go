package realcode

import (
	"context"
	"encoding/json"
	"log"
	"time"

	"github.com/nats-io/nats.go"
)

// Periodic sends whose success path looks at the reply but goes round
// whatever it says: the test is an observation, not a "busy" answer, and
// the loop is not a retry. Beside each, the near miss where an answer
// ends the loop, which is reported.

type replicator struct {
	nc      *nats.Conn
	stream  string
	repairs int
}

// ensureConsumer asks for the consumer and creates it when it is gone.
func (r *replicator) ensureConsumer() (created bool, err error) { // want ensureConsumer:`sends via \(\*nats\.Conn\)\.Request`
	resp, err := r.nc.Request("$JS.API.CONSUMER.INFO."+r.stream+".copier", nil, 2*time.Second)
	if err != nil {
		return false, err
	}
	var info struct {
		Error *struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &info); err != nil {
		return false, err
	}
	if info.Error == nil {
		return false, nil
	}
	if _, err := r.nc.Request("$JS.API.CONSUMER.DURABLE.CREATE."+r.stream+".copier", []byte(`{}`), 2*time.Second); err != nil {
		return false, err
	}
	return true, nil
}

// healthCheck runs on a timer whatever the check finds.
func (r *replicator) healthCheck(ctx context.Context, every time.Duration) { // want healthCheck:`sends via \(\*nats\.Conn\)\.Request`
	timer := time.NewTimer(every)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			created, err := r.ensureConsumer()
			if err != nil {
				log.Printf("health check: %v", err)
			}
			if created {
				r.repairs++
			}
			timer.Reset(every)
		case <-ctx.Done():
			return
		}
	}
}

// Near miss: the check is repeated until it repairs something.
func (r *replicator) repairOnce(ctx context.Context, every time.Duration) error { // want repairOnce:`sends via \(\*nats\.Conn\)\.Request`
	timer := time.NewTimer(every)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			created, err := r.ensureConsumer() // want `call of \(\*replicator\)\.ensureConsumer \(via \(\*nats\.Conn\)\.Request\) is retried on failure`
			if err != nil {
				log.Printf("health check: %v", err)
			}
			if created {
				return nil
			}
			timer.Reset(every)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// statusProbe logs a bad status and asks again at the next tick.
func statusProbe(ctx context.Context, nc *nats.Conn, every time.Duration) { // want statusProbe:`sends via \(\*nats\.Conn\)\.Request`
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		msg, err := nc.Request("svc.status", nil, time.Second)
		if err != nil {
			log.Printf("status: %v", err)
			continue
		}
		if string(msg.Data) != "ok" {
			log.Printf("status: %s", msg.Data)
		}
	}
}

// Near miss: a good status ends the wait.
func awaitReady(ctx context.Context, nc *nats.Conn) error { // want awaitReady:`sends via \(\*nats\.Conn\)\.Request`
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		msg, err := nc.Request("svc.status", nil, time.Second) // want `call of \(\*nats\.Conn\)\.Request is retried on failure`
		if err != nil {
			continue
		}
		if string(msg.Data) == "ok" {
			return nil
		}
	}
}

// loadTest sends n requests and counts the failures and bad answers.
func loadTest(nc *nats.Conn, n int, payload []byte) (failed, bad int) { // want loadTest:`sends via \(\*nats\.Conn\)\.Request`
	for i := 0; i < n; i++ {
		m, err := nc.Request("svc.work", payload, time.Second)
		if err != nil {
			failed++
			continue
		}
		if string(m.Data) != "ok" {
			bad++
		}
	}
	return failed, bad
}

// Near miss: a good answer sets the loop's condition.
func awaitAccepted(nc *nats.Conn, payload []byte) { // want awaitAccepted:`sends via \(\*nats\.Conn\)\.Request`
	accepted := false
	for tries := 0; !accepted && tries < 10; tries++ {
		m, err := nc.Request("svc.work", payload, time.Second) // want `call of \(\*nats\.Conn\)\.Request is retried on failure`
		if err != nil {
			continue
		}
		if string(m.Data) == "accepted" {
			accepted = true
		}
	}
}
