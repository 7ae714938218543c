// Package app calls delegation's exported functions as their users do: // want package:"uses nats.go"
// each call is judged with the options it passes.
package app

import (
	"delegation"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func monitor(server string, creds string) error {
	check := &delegation.Result{}
	opts := []nats.Option{nats.UserCredentials(creds), nats.Timeout(2 * time.Second)}
	if err := delegation.CheckConnection(server, opts, time.Second, check); err != nil { // want `call of CheckConnection connects without nats.ReconnectBufSize\(-1\)`
		return err
	}
	safe := append(opts, nats.ReconnectBufSize(-1))
	if err := delegation.CheckConnection(server, safe, time.Second, check); err != nil {
		return err
	}
	return delegation.CheckJetstreamMeta(server, safe, check, delegation.CheckJetstreamMetaOptions{})
}

func fromContext(c *delegation.Context) error {
	nc, err := c.Connect(nats.Name("cli")) // want `call of Connect connects without nats.ReconnectBufSize\(-1\)`
	if err != nil {
		return err
	}
	nc.Close()
	nc, err = c.Connect(nats.Name("cli"), nats.ReconnectBufSize(-1))
	if err != nil {
		return err
	}
	nc.Close()
	return nil
}

func verify(t *testing.T, url string) {
	delegation.ConnectAndVerify(t, url, nats.UserCredentials("user.creds")) // want `call of ConnectAndVerify connects without nats.ReconnectBufSize\(-1\)`
	delegation.ConnectAndVerify(t, url, nats.ReconnectBufSize(-1))
	_, _ = delegation.Redial(url, nats.ReconnectBufSize(-1))
}

// ntf-client's helpers from another package: a call without option
// values is judged; the values themselves are not followed across
// packages.
func clusterTests(t *testing.T, c *delegation.TestClient, h func(*testing.T, *nats.Conn)) {
	c.WithServer(t, h)                                                           // want `call of WithServer connects without nats.ReconnectBufSize\(-1\)`
	c.WithServer(t, h, delegation.WithConnectOptions(nats.ReconnectBufSize(-1))) // want `unjudged call of WithServer: option values of another package, not followed`
}
