package outbox

import (
	"context"
	"log"
	"time"

	"ifaceretry/events"
)

// Forwarder hands events on from a goroutine it starts: the retry is in a
// function literal, which the finding in the wiring package names by its
// line and enclosing method.
type Forwarder struct {
	fwd events.Forwarder
}

// NewForwarder returns a Forwarder publishing with fwd.
func NewForwarder(fwd events.Forwarder) *Forwarder { return &Forwarder{fwd: fwd} }

// Start forwards the events of in until it is closed, each until it goes.
func (f *Forwarder) Start(ctx context.Context, in <-chan Event) {
	go func() {
		for ev := range in {
			for {
				err := f.fwd.Publish(ctx, ev.Subject, ev.Data)
				if err == nil {
					break
				}
				log.Printf("forward %s: %v", ev.ID, err)
				time.Sleep(time.Second)
			}
		}
	}()
}
