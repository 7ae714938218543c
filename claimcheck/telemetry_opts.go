package claimcheck

import (
	"fmt"

	itel "github.com/natssend/natssend/internal/telemetry"
	"github.com/natssend/natssend/telemetry"
)

// Telemetry (OpenTelemetry): without options, a Store uses the global
// tracer provider, meter provider and text-map propagator, resolved at
// every use. PublishMsg and PublishJetStream make a Producer span and
// inject its trace context into the message (the reference of a claim
// check carries it) before deciding whether it fits; the upload and a
// resolve within a traced operation are child spans; the subscription
// helpers (Subscribe, QueueSubscribe, Consume, Messages) extract it and
// make a Consumer span, which the message handed to the handler carries
// in its headers (extract it with the propagator, for example with
// propagation.HeaderCarrier(m.Header), to continue the trace: the keys are
// written in canonical form, Traceparent, and read in any case).
// Claim checks stored are counted (natssend.claimcheck.stored, and their
// bytes natssend.claimcheck.stored.size).

// WithTelemetry configures the Store's telemetry with the options of
// package telemetry, the set a Client and its handlers take too
// (shim.WithTelemetry, shim.Telemetry). An invalid one fails New with
// ErrInvalidOption.
func WithTelemetry(opts ...telemetry.Option) Option {
	return func(c *config) error {
		if err := telemetry.Apply(c.telemetry(), opts); err != nil {
			return fmt.Errorf("claimcheck: %w", err)
		}
		return nil
	}
}

func (c *config) telemetry() *itel.Config {
	if c.tel == nil {
		c.tel = &itel.Config{}
	}
	return c.tel
}
