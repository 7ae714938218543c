// Package events declares what the outbox needs from a broker and an
// audit trail, with no broker in it: the implementations live in other
// packages (natspub, logaudit) and the command wires them.
package events

import "context"

// Publisher sends an event to the broker.
type Publisher interface {
	Publish(ctx context.Context, subject string, data []byte) error
}

// Auditor records that an event was handled.
type Auditor interface {
	Record(ctx context.Context, event string) error
}

// Forwarder hands events on to another site's broker.
type Forwarder interface {
	Publish(ctx context.Context, subject string, data []byte) error
}
