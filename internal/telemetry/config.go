package telemetry

import (
	"reflect"
	"sync/atomic"
	"unsafe"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/natssend/natssend/outcome"
)

// ErrInvalidOption is wrapped by every error about an invalid option
// value of natssend (shim.ErrInvalidOption and claimcheck.ErrInvalidOption
// are this error): the public telemetry package, below both, needs it too.
var ErrInvalidOption = outcome.ErrInvalidOption

// ScopeName is the instrumentation scope of natssend's tracer and meter.
const ScopeName = "github.com/natssend/natssend"

// Config is the telemetry configuration of one sender or receiver. The
// zero value (and a nil *Config) uses the global providers and
// propagator, resolved at use.
type Config struct {
	TracerProvider trace.TracerProvider          // nil: otel.GetTracerProvider()
	MeterProvider  metric.MeterProvider          // nil: otel.GetMeterProvider()
	Propagator     propagation.TextMapPropagator // nil: otel.GetTextMapPropagator()
	Off            bool                          // no spans, no metrics, no propagation
	// Subject maps a subject to its messaging.destination.name value (nil:
	// the subject itself), to keep the cardinality of metrics and span
	// names bounded when subjects carry IDs.
	Subject func(subject string) string

	fixed  bool // Fix was called: the explicit providers' results below
	tracer trace.Tracer
	inst   *instruments
	prop   propagation.TextMapPropagator
}

// Fix resolves c's explicit providers once, so that Resolve does not look
// them up at every use. Call it after the last change to c.
func (c *Config) Fix() {
	if c == nil {
		return
	}
	c.fixed = true
	if c.TracerProvider != nil && !noopType(c.TracerProvider) {
		c.tracer = c.TracerProvider.Tracer(ScopeName)
	}
	if c.MeterProvider != nil && !noopType(c.MeterProvider) {
		c.inst = newInstruments(c.MeterProvider.Meter(ScopeName))
	}
	if c.Propagator != nil && !noopType(c.Propagator) && len(safeFields(c.Propagator)) > 0 {
		c.prop = c.Propagator
	}
}

// Tel is a Config resolved for one operation: nil fields record nothing.
type Tel struct {
	tracer  trace.Tracer
	inst    *instruments
	prop    propagation.TextMapPropagator
	subject func(string) string
	inbox   string // the connection's custom inbox prefix, "" when none or not known
}

// WithInbox is t knowing the inbox prefix of its connection
// (nats.Options.InboxPrefix, "" for the default), so that subjects under
// it are named as the temporary destinations they are.
func (t Tel) WithInbox(prefix string) Tel {
	t.inbox = prefix
	return t
}

// Active reports whether anything is recorded or propagated.
func (t Tel) Active() bool { return t.tracer != nil || t.inst != nil || t.prop != nil }

// Resolve returns what c records now. It does not allocate once the
// providers in use have been seen.
func (c *Config) Resolve() Tel {
	if c == nil {
		return globals()
	}
	if c.Off {
		return Tel{}
	}
	t := Tel{subject: c.Subject}
	switch {
	case c.TracerProvider == nil:
		t.tracer = tracerOf(otel.GetTracerProvider())
	case c.fixed:
		t.tracer = c.tracer
	default:
		t.tracer = tracerOf(c.TracerProvider)
	}
	switch {
	case c.MeterProvider == nil:
		t.inst = instrumentsOf(otel.GetMeterProvider())
	case c.fixed:
		t.inst = c.inst
	default:
		t.inst = instrumentsOf(c.MeterProvider)
	}
	switch {
	case c.Propagator == nil:
		t.prop = propOf(otel.GetTextMapPropagator())
	case c.fixed:
		t.prop = c.prop
	default:
		t.prop = propOf(c.Propagator)
	}
	return t
}

// noopType reports whether v's dynamic type is one that records nothing:
// the global delegates before an SDK is set (the otel API returns the
// set provider itself once one is) and the noop packages' types.
func noopType(v any) bool {
	switch reflect.TypeOf(v).String() {
	case "*global.tracerProvider", "*global.meterProvider", "*global.textMapPropagator",
		"noop.TracerProvider", "noop.MeterProvider", "trace.noopTracerProvider":
		return true
	}
	return false
}

// cached is the last value of one kind seen (by identity) and what was
// made for it.
type cached[R any] struct {
	id ident
	r  R
}

var (
	lastTracer atomic.Pointer[cached[trace.Tracer]]
	lastInst   atomic.Pointer[cached[*instruments]]
	lastProp   atomic.Pointer[cached[propagation.TextMapPropagator]]
)

// ident is an interface value's identity: its dynamic type and data
// words. Two equal idents are the same value, whatever its type (a
// propagator that is a slice included), and comparing them cannot panic
// as == on interfaces can.
type ident struct{ typ, data unsafe.Pointer }

func identOf(v any) ident { return *(*ident)(unsafe.Pointer(&v)) }

// lookup returns the cached result for v, or makes it with mk and caches
// it, so that the next lookup of the same value is one compare.
func lookup[V any, R any](p *atomic.Pointer[cached[R]], v V, mk func(V) R) R {
	id := identOf(v)
	if c := p.Load(); c != nil && c.id == id {
		return c.r
	}
	r := mk(v)
	p.Store(&cached[R]{id: id, r: r})
	return r
}

func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return lookup(&lastTracer, tp, func(tp trace.TracerProvider) trace.Tracer {
		if noopType(tp) {
			return nil
		}
		return tp.Tracer(ScopeName)
	})
}

func instrumentsOf(mp metric.MeterProvider) *instruments {
	if mp == nil {
		return nil
	}
	return lookup(&lastInst, mp, func(mp metric.MeterProvider) *instruments {
		if noopType(mp) {
			return nil
		}
		return newInstruments(mp.Meter(ScopeName))
	})
}

func propOf(p propagation.TextMapPropagator) propagation.TextMapPropagator {
	if p == nil {
		return nil
	}
	return lookup(&lastProp, p, func(p propagation.TextMapPropagator) propagation.TextMapPropagator {
		if noopType(p) || len(safeFields(p)) == 0 {
			return nil
		}
		return p
	})
}

// safeFields is p.Fields(), nil if it panics.
func safeFields(p propagation.TextMapPropagator) (f []string) {
	defer func() {
		if recover() != nil {
			f = []string{"?"} // keep it: Inject recovers too
		}
	}()
	return p.Fields()
}

// globalSnap is the globals last seen and what they record.
type globalSnap struct {
	tp, mp, p ident
	tel       Tel
}

var lastGlobals atomic.Pointer[globalSnap]

// GlobalsIdle reports whether the global providers and propagator record
// and propagate nothing (no SDK configured), metrics included, or, with
// metricsOnly, whether they record no metrics: then a send with no
// telemetry options has nothing to do. It is the publish path's check: one
// snapshot compare, no copy of a Tel; with metricsOnly, only the meter
// provider is looked up and compared.
func GlobalsIdle(metricsOnly bool) bool {
	g := lastGlobals.Load()
	if metricsOnly {
		// The snapshot's instruments are those of its meter provider,
		// whatever the other two are now.
		if g != nil && g.mp == identOf(otel.GetMeterProvider()) {
			return g.tel.inst == nil
		}
		return globals().inst == nil
	}
	tp, mp, p := otel.GetTracerProvider(), otel.GetMeterProvider(), otel.GetTextMapPropagator()
	if g == nil || g.tp != identOf(tp) || g.mp != identOf(mp) || g.p != identOf(p) {
		return !globals().Active()
	}
	return !g.tel.Active()
}

// globals resolves the global providers: one snapshot compare while they
// stay the same.
func globals() Tel {
	tp, mp, p := otel.GetTracerProvider(), otel.GetMeterProvider(), otel.GetTextMapPropagator()
	itp, imp, ip := identOf(tp), identOf(mp), identOf(p)
	if g := lastGlobals.Load(); g != nil && g.tp == itp && g.mp == imp && g.p == ip {
		return g.tel
	}
	t := Tel{tracer: tracerOf(tp), inst: instrumentsOf(mp), prop: propOf(p)}
	lastGlobals.Store(&globalSnap{tp: itp, mp: imp, p: ip, tel: t})
	return t
}
