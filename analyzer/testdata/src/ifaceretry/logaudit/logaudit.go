// Package logaudit implements events.Auditor with a log line: no send.
package logaudit

import (
	"context"
	"log"
)

// Logger writes audit records to a log.
type Logger struct{ L *log.Logger }

// Record logs event.
func (l Logger) Record(ctx context.Context, event string) error {
	l.L.Printf("audit: %s", event)
	return nil
}
