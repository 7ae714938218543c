package telemetry

import (
	"testing"

	"go.opentelemetry.io/otel/semconv/v1.43.0/messagingconv"
)

// The metric names the conventions define are theirs, letter for letter.
func TestMetricNamesAreTheConventions(t *testing.T) {
	for got, want := range map[string]string{
		MetricOperationDuration: messagingconv.ClientOperationDuration{}.Name(),
		MetricProcessDuration:   messagingconv.ProcessDuration{}.Name(),
		MetricSent:              messagingconv.ClientSentMessages{}.Name(),
		MetricConsumed:          messagingconv.ClientConsumedMessages{}.Name(),
	} {
		if got != want {
			t.Errorf("metric %q, the conventions name it %q", got, want)
		}
	}
}
