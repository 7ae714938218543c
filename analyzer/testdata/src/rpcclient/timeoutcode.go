package rpcclient

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
)

// CodeBusy is the service's "not now": it did not run the request.
const CodeBusy = 503

// Caller is a transport that answers its own timeouts with a coded
// response instead of an error, as gateways do.
type Caller interface {
	Do(ctx context.Context, req *Request) (*Response, error)
}

type codedTransport struct{ nc *nats.Conn }

func newCaller(nc *nats.Conn) Caller { return codedTransport{nc: nc} }

func (t codedTransport) Do(ctx context.Context, req *Request) (*Response, error) { // want Do:`sends via \(\*nats\.Conn\)\.RequestWithContext`
	msg, err := t.nc.RequestWithContext(ctx, req.Service+"."+req.Method, req.Body)
	if errors.Is(err, nats.ErrTimeout) {
		return &Response{Code: CodeTimeout}, nil
	}
	if err != nil {
		return nil, err
	}
	return &Response{Code: CodeOK, Body: msg.Data}, nil
}

// A timeout-coded response, received from the goroutine, sent again.
func doCoded(ctx context.Context, c Caller, req *Request) (*Response, error) {
	for {
		ch := make(chan result, 1)
		go func() {
			resp, err := c.Do(ctx, req) // want `call of \(Caller\)\.Do in a goroutine is retried on a failure from ch`
			ch <- result{resp, err}
		}()
		r := <-ch
		if r.err != nil {
			return nil, r.err
		}
		if r.resp.Code == CodeTimeout {
			continue
		}
		return r.resp, nil
	}
}

// The same without the goroutine.
func doCodedInline(ctx context.Context, c Caller, req *Request) (*Response, error) {
	for attempt := 0; attempt < 3; attempt++ {
		resp, err := c.Do(ctx, req) // want `call of \(Caller\)\.Do \(via \(\*nats\.Conn\)\.RequestWithContext\) is retried on failure`
		if err != nil {
			return nil, err
		}
		if resp.Code != CodeTimeout {
			return resp, nil
		}
	}
	return nil, ErrTimeout
}

// Near miss: asked again only when the service said it did not run it.
func doUntilServed(ctx context.Context, c Caller, req *Request) (*Response, error) {
	for {
		resp, err := c.Do(ctx, req)
		if err != nil {
			return nil, err
		}
		if resp.Code == CodeBusy {
			time.Sleep(time.Second)
			continue
		}
		return resp, nil
	}
}
