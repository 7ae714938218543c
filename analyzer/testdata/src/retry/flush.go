package retry

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/nats-io/nats.go"
)

// Publish, then flush to learn whether the server has it; a failed flush
// publishes again, though the first publish may have been delivered.
func publishConfirmed(nc *nats.Conn, subj string, data []byte) error { // want publishConfirmed:`sends via \(\*nats.Conn\).Publish`
	for attempt := 0; attempt < 3; attempt++ {
		if err := nc.Publish(subj, data); err != nil { // want `call of \(\*nats.Conn\).Publish is retried on failure: it may be out already`
			return err
		}
		if err := nc.FlushTimeout(time.Second); err != nil {
			log.Printf("flush: %v, publishing again", err)
			continue
		}
		return nil
	}
	return errors.New("not confirmed")
}

// The same with a context-bound flush and a retry on the publish's error too.
func publishUntilFlushed(ctx context.Context, nc *nats.Conn, subj string, data []byte) { // want publishUntilFlushed:`sends via \(\*nats.Conn\).Publish`
	for ctx.Err() == nil {
		err := nc.Publish(subj, data) // want `call of \(\*nats.Conn\).Publish is retried on failure: it may be out already`
		if err == nil {
			err = nc.FlushWithContext(ctx)
		}
		if err == nil {
			return
		}
	}
}

// Near miss: the flush's failure is returned, not retried.
func publishOnce(nc *nats.Conn, subj string, data []byte) error { // want publishOnce:`sends via \(\*nats.Conn\).Publish`
	if err := nc.Publish(subj, data); err != nil {
		return err
	}
	return nc.Flush()
}

// Near miss: a batch flushed once at the end of each item's publish; a
// failed flush moves on to the next item.
func publishAll(nc *nats.Conn, items [][]byte) { // want publishAll:`sends via \(\*nats.Conn\).Publish`
	for _, it := range items {
		if err := nc.Publish("items", it); err != nil {
			continue
		}
		if err := nc.Flush(); err != nil {
			log.Printf("flush: %v", err)
		}
	}
}
