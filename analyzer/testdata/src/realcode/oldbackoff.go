package realcode

import (
	"errors"
	"time"

	"github.com/cenkalti/backoff"
	"github.com/nats-io/nats.go"
)

// cenkalti/backoff imported without a major version (v2.2.1+incompatible,
// still common in older modules) retries like v4.
func fetchConfig(nc *nats.Conn, name string) ([]byte, error) {
	var data []byte
	err := backoff.Retry(func() error {
		msg, err := nc.Request("config.get", []byte(name), time.Second) // want `call of \(\*nats\.Conn\)\.Request is retried on failure by backoff\.Retry`
		if err != nil {
			return err
		}
		data = msg.Data
		return nil
	}, backoff.NewExponentialBackOff())
	return data, err
}

// Near miss: a failure is made permanent, the helper stops.
func fetchConfigOnce(nc *nats.Conn, name string) ([]byte, error) {
	var data []byte
	err := backoff.Retry(func() error {
		msg, err := nc.Request("config.get", []byte(name), time.Second)
		if err != nil {
			return backoff.Permanent(errors.Join(err, errors.New("config.get")))
		}
		data = msg.Data
		return nil
	}, backoff.NewExponentialBackOff())
	return data, err
}
