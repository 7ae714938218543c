// Package outbox relays stored events to the broker. It imports no NATS // want package:"retries through events.Publisher.Publish events.Auditor.Record events.Forwarder.Publish"
// code: it retries events.Publisher, whatever implements it.
package outbox

import (
	"context"
	"fmt"
	"log"
	"time"

	"ifaceretry/events"
)

// Event is a stored event.
type Event struct {
	ID      string
	Subject string
	Data    []byte
}

// Relay moves events from the outbox table to the broker.
type Relay struct {
	pub   events.Publisher
	audit events.Auditor
	every time.Duration
}

// NewRelay returns a relay publishing with pub and recording with audit.
func NewRelay(pub events.Publisher, audit events.Auditor) *Relay {
	return &Relay{pub: pub, audit: audit, every: 5 * time.Second}
}

// Deliver publishes ev, trying again every few seconds until the broker
// takes it: a publish that timed out may have been stored.
func (r *Relay) Deliver(ctx context.Context, ev Event) error {
	for {
		err := r.pub.Publish(ctx, ev.Subject, ev.Data)
		if err == nil {
			return r.note(ctx, ev)
		}
		log.Printf("outbox: publish %s: %v; retrying in %s", ev.ID, err, r.every)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.every):
		}
	}
}

// Flush publishes a batch in order and stops at the first failure:
// iteration, not a retry.
func (r *Relay) Flush(ctx context.Context, batch []Event) error {
	for _, ev := range batch {
		if err := r.pub.Publish(ctx, ev.Subject, ev.Data); err != nil {
			return fmt.Errorf("outbox: event %s: %w", ev.ID, err)
		}
	}
	return nil
}

// Redeliver is reviewed: the consumers de-duplicate on the event ID.
func (r *Relay) Redeliver(ctx context.Context, ev Event) {
	for {
		//natssend:reviewed retry: consumers de-duplicate on the event ID
		if err := r.pub.Publish(ctx, ev.Subject, ev.Data); err == nil {
			return
		}
		time.Sleep(r.every)
	}
}

// note records ev, trying three times: retried too, but no implementation
// of events.Auditor sends.
func (r *Relay) note(ctx context.Context, ev Event) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = r.audit.Record(ctx, ev.ID); err == nil {
			return nil
		}
	}
	return err
}

// Heartbeat publishes on every tick whatever the last one did: periodic,
// not a retry, so not in the package's fact.
func (r *Relay) Heartbeat(ctx context.Context, subject string) {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := r.pub.Publish(ctx, subject, []byte("alive")); err != nil {
			log.Printf("outbox: heartbeat: %v", err)
		}
	}
}
