// Package webhook is the sink plugin that posts over HTTP: no NATS send,
// nothing reported where it registers.
package webhook

import (
	"bytes"
	"context"
	"net/http"

	"ifaceretry/sink"
)

type hook struct{ url string }

func (h hook) Send(ctx context.Context, key string, value []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url+"/"+key, bytes.NewReader(value))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (hook) Close() error { return nil }

// Register registers the webhook posting to url.
func Register(url string) { sink.Register("webhook", hook{url: url}) }
