// Package errpreds holds error predicates used from another package. // want package:"uses nats.go"
package errpreds

import (
	"errors"
	"os"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NotDelivered is true only for errors by which nobody got the message.
func NotDelivered(err error) bool { // want NotDelivered:`true only when nothing was delivered`
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// Transient is true for timeouts too: not a proof of anything.
func Transient(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout)
}

// Die logs and exits.
func Die(msg string) { // want Die:`does not return`
	println(msg)
	os.Exit(2)
}
