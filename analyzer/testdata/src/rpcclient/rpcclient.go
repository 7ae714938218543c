// Package rpcclient is an RPC framework's client written as such code is: // want package:"uses nats.go"
// a transport interface of its own, a NATS implementation of it in the
// same package, and a client that calls the transport in a goroutine,
// waits for the result on a channel or for its context, and retries on a
// timeout.
package rpcclient

import (
	"context"
	"errors"
	"log"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
)

// Request is one call of a service method.
type Request struct {
	Service, Method string
	Body            []byte
}

// Response is a service's answer.
type Response struct {
	Code int
	Body []byte
}

// Codes of a Response.
const (
	CodeOK      = 200
	CodeTimeout = 504
)

// ErrTimeout is the transport's timeout, whatever the transport.
var ErrTimeout = errors.New("rpc: timeout")

// Transport carries one request to its service and brings back the
// response.
type Transport interface {
	Call(ctx context.Context, req *Request) (*Response, error)
}

// natsTransport is the NATS transport: a request per call.
type natsTransport struct {
	nc     *nats.Conn
	prefix string
}

// NewNATSTransport returns the NATS transport of nc.
func NewNATSTransport(nc *nats.Conn) Transport {
	return &natsTransport{nc: nc, prefix: "rpc"}
}

func (t *natsTransport) Call(ctx context.Context, req *Request) (*Response, error) { // want Call:`sends via \(\*nats\.Conn\)\.RequestWithContext`
	msg, err := t.nc.RequestWithContext(ctx, t.prefix+"."+req.Service+"."+req.Method, req.Body)
	if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		return nil, ErrTimeout
	}
	if err != nil {
		return nil, err
	}
	return &Response{Code: CodeOK, Body: msg.Data}, nil
}

// result is what the call goroutine hands back.
type result struct {
	resp *Response
	err  error
}

// Client calls services through a Transport.
type Client struct {
	t       Transport
	retries int
}

// NewClient returns a client of t.
func NewClient(t Transport) *Client { return &Client{t: t, retries: 3} }

// Call sends the request again when the result on the channel is a
// timeout: the first request may have run.
func (c *Client) Call(ctx context.Context, req *Request) (*Response, error) {
	var lastErr error
	for i := 0; i <= c.retries; i++ {
		ch := make(chan result, 1)
		go func() {
			resp, err := c.t.Call(ctx, req) // want `call of \(Transport\)\.Call in a goroutine is retried on a failure from ch: it may have run`
			ch <- result{resp: resp, err: err}
		}()
		select {
		case r := <-ch:
			if r.err == nil {
				return r.resp, nil
			}
			if !errors.Is(r.err, ErrTimeout) {
				return nil, r.err
			}
			lastErr = r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, lastErr
}

// Notifier publishes one event.
type Notifier interface {
	Notify(subject string, data []byte) error
}

// natsNotifier is the NATS notifier.
type natsNotifier struct{ nc *nats.Conn }

func (n natsNotifier) Notify(subject string, data []byte) error { // want Notify:`sends via \(\*nats\.Conn\)\.Publish`
	return n.nc.Publish(subject, data)
}

// notifyWithTimeout gives each attempt a second, the error coming back on
// a channel of errors: a publish that timed out here may still be sent.
func notifyWithTimeout(n Notifier, subject string, data []byte) error {
	for {
		errc := make(chan error, 1)
		go func() { errc <- n.Notify(subject, data) }() // want `call of \(Notifier\)\.Notify in a goroutine is retried on a failure from errc`
		var err error
		select {
		case err = <-errc:
		case <-time.After(time.Second):
			err = ErrTimeout
		}
		if err == nil {
			return nil
		}
		log.Printf("notify %s: %v, again", subject, err)
	}
}

func notifiers(nc *nats.Conn) []Notifier { return []Notifier{natsNotifier{nc: nc}} }

// Near miss: the loop waits again for the same goroutine's result; it does
// not send again.
func (c *Client) CallLogging(ctx context.Context, req *Request) (*Response, error) {
	ch := make(chan result, 1)
	go func() {
		resp, err := c.t.Call(ctx, req)
		ch <- result{resp, err}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case r := <-ch:
			return r.resp, r.err
		case <-tick.C:
			log.Printf("still waiting for %s.%s", req.Service, req.Method)
		}
	}
}

// Near miss: sent again only when nothing was delivered (no responders).
func (c *Client) CallUntilServed(ctx context.Context, req *Request) (*Response, error) {
	for {
		ch := make(chan result, 1)
		go func() {
			resp, err := c.t.Call(ctx, req)
			ch <- result{resp, err}
		}()
		r := <-ch
		if errors.Is(r.err, nats.ErrNoResponders) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		return r.resp, r.err
	}
}

// Near miss: a goroutine per distinct request; a failure moves on to the
// next one.
func (c *Client) CallEach(ctx context.Context, reqs []*Request) []*Response {
	var out []*Response
	for _, req := range reqs {
		ch := make(chan result, 1)
		go func() {
			resp, err := c.t.Call(ctx, req)
			ch <- result{resp, err}
		}()
		r := <-ch
		if r.err != nil {
			log.Printf("%s.%s: %v", req.Service, req.Method, r.err)
			continue
		}
		out = append(out, r.resp)
	}
	return out
}

// Near miss: the fan-out of distinct requests, gathered after.
func (c *Client) CallAll(ctx context.Context, reqs []*Request) []result {
	ch := make(chan result, len(reqs))
	for _, req := range reqs {
		go func() {
			resp, err := c.t.Call(ctx, req)
			ch <- result{resp, err}
		}()
	}
	out := make([]result, 0, len(reqs))
	for range reqs {
		out = append(out, <-ch)
	}
	return out
}

// Prober checks that a service is up.
type Prober interface {
	Probe(ctx context.Context, url string) error
}

// httpProber is the only Prober: it sends nothing through NATS.
type httpProber struct{ hc *http.Client }

func (p httpProber) Probe(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
	if err != nil {
		return err
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func newProber() Prober { return httpProber{hc: http.DefaultClient} }

// Near miss: the same shape over a transport that is not a NATS sender.
func probeUntilUp(ctx context.Context, p Prober, url string) error {
	for {
		errc := make(chan error, 1)
		go func() { errc <- p.Probe(ctx, url) }()
		if err := <-errc; err == nil {
			return nil
		}
		time.Sleep(time.Second)
	}
}

// Sink takes events; one implementation publishes them, the other logs.
type Sink interface {
	Put(subject string, data []byte) error
}

type natsSink struct{ nc *nats.Conn }

func (s natsSink) Put(subject string, data []byte) error { // want Put:`sends via \(\*nats\.Conn\)\.Publish`
	return s.nc.Publish(subject, data)
}

type logSink struct{}

func (logSink) Put(subject string, data []byte) error {
	log.Printf("%s: %d bytes", subject, len(data))
	return nil
}

func newSink(nc *nats.Conn, dry bool) Sink {
	if dry {
		return logSink{}
	}
	return natsSink{nc: nc}
}

// Near miss: not every implementation converted into Sink sends.
func putUntilDone(s Sink, subject string, data []byte) {
	for {
		errc := make(chan error, 1)
		go func() { errc <- s.Put(subject, data) }()
		if err := <-errc; err == nil {
			return
		}
	}
}

// Near miss: the request is passed to the goroutine as an argument, one
// per item, the first answer wins; a failure moves on to the next
// request, another body.
func (c *Client) FirstOf(ctx context.Context, reqs []*Request) (*Response, error) {
	for _, req := range reqs {
		ch := make(chan result, 1)
		go func(r *Request) {
			resp, err := c.t.Call(ctx, r)
			ch <- result{resp, err}
		}(req)
		if r := <-ch; r.err == nil {
			return r.resp, nil
		}
	}
	return nil, ErrTimeout
}

func newEvent() []byte { return []byte(time.Now().String()) }

// Near miss: every attempt publishes a new event, another body.
func notifyFresh(n Notifier, subject string) error {
	for {
		errc := make(chan error, 1)
		go func() { errc <- n.Notify(subject, newEvent()) }()
		if err := <-errc; err == nil {
			return nil
		}
	}
}
