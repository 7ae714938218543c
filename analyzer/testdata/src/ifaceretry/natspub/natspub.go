// Package natspub implements events.Publisher with a JetStream publish. // want package:"uses nats.go"
// It does not import events: the command converts it.
package natspub

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// JetStream publishes through a JetStream context.
type JetStream struct {
	js jetstream.JetStream
}

// New returns a publisher on js.
func New(js jetstream.JetStream) *JetStream { return &JetStream{js: js} }

// Publish stores data on the stream bound to subject.
func (p *JetStream) Publish(ctx context.Context, subject string, data []byte) error { // want Publish:`sends via \(jetstream.Publisher\).Publish`
	_, err := p.js.Publish(ctx, subject, data)
	return err
}
