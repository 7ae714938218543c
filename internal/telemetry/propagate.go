package telemetry

import (
	"context"
	"net/textproto"
	"strings"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"

	"github.com/natssend/natssend/internal/wire"
)

// Inject returns h with ctx's trace context added by t's propagator, as a
// new map: h itself is never modified. Keys are written in canonical MIME
// form (Traceparent, Tracestate, Baggage), the form
// propagation.HeaderCarrier(msg.Header) looks up (nats.Header and
// http.Header share their type), and replace a value of the same key in
// any other case. It returns h unchanged (and injected false) when there
// is nothing to inject, and when the
// propagator panics or writes a header nats.go cannot send (an invalid
// key, a line break in a value): a send never fails because of its
// telemetry. Such a fault is counted (natssend.telemetry.errors).
func (t Tel) Inject(ctx context.Context, h nats.Header) (out nats.Header, injected bool) {
	if t.prop == nil || !trace.SpanContextFromContext(ctx).IsValid() && baggage.FromContext(ctx).Len() == 0 {
		return h, false
	}
	c := &carrier{h: make(nats.Header, len(h)+2)}
	for k, v := range h {
		c.h[k] = v // the value slices are replaced, never appended to
	}
	defer func() {
		if p := recover(); p != nil {
			out, injected = h, false
			t.fault(ctx, "inject_panic")
		}
	}()
	t.prop.Inject(ctx, c)
	if c.bad {
		t.fault(ctx, "inject_invalid_header")
		return h, false
	}
	if !c.set {
		return h, false
	}
	return c.h, true
}

// Extract returns ctx with the remote trace context of h, if any. A
// malformed one is ignored (the propagator's rule) and a panicking
// propagator is recovered: ctx is returned as it is.
func (t Tel) Extract(ctx context.Context, h nats.Header) (out context.Context) {
	if t.prop == nil || len(h) == 0 {
		return ctx
	}
	defer func() {
		if p := recover(); p != nil {
			out = ctx
			t.fault(ctx, "extract_panic")
		}
	}()
	return t.prop.Extract(ctx, carrier{h: h}.ro())
}

// carrier is a propagation.TextMapCarrier on a nats.Header. Set replaces
// the value slice, so a copied map never shares a modified slice with
// the caller's.
type carrier struct {
	h        nats.Header
	set, bad bool
	readOnly bool
}

func (c carrier) ro() *carrier { c.readOnly = true; return &c }

// Get returns key's first value, whatever the case of the key in the
// header: NATS headers are case-sensitive, W3C propagators ask for lower
// case, HeaderCarrier producers and natssend send canonical keys.
func (c *carrier) Get(key string) string {
	if v := c.h[key]; len(v) > 0 {
		return v[0]
	}
	for k, v := range c.h {
		if len(v) > 0 && strings.EqualFold(k, key) {
			return v[0]
		}
	}
	return ""
}

// Set sets key, in canonical form, to value, and drops the key in any
// other case (a trace context the message carried before).
func (c *carrier) Set(key, value string) {
	if c.readOnly {
		return
	}
	if !wire.ValidHeaderKey(key) || strings.ContainsAny(value, "\r\n") {
		c.bad = true
		return
	}
	key = textproto.CanonicalMIMEHeaderKey(key)
	for k := range c.h {
		if k != key && strings.EqualFold(k, key) {
			delete(c.h, k)
		}
	}
	c.h[key] = []string{value}
	c.set = true
}

func (c *carrier) Keys() []string {
	keys := make([]string, 0, len(c.h))
	for k := range c.h {
		keys = append(keys, k)
	}
	return keys
}
