package main_test

import (
	"regexp"
	"slices"
	"testing"
)

// The outbox shape across packages: the interface (events), its JetStream
// implementation (natspub), the loop retrying it (outbox, which imports no
// NATS code) and the command converting the one into the other.
func init() {
	fixture["events/events.go"] = `// Package events declares the broker the outbox needs.
package events

import "context"

// Publisher sends an event.
type Publisher interface {
	Publish(ctx context.Context, subject string, data []byte) error
}
`
	fixture["natspub/natspub.go"] = `// Package natspub publishes events to JetStream.
package natspub

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// JetStream is an events.Publisher.
type JetStream struct{ js jetstream.JetStream }

// New returns a publisher on js.
func New(js jetstream.JetStream) *JetStream { return &JetStream{js: js} }

// Publish stores data.
func (p *JetStream) Publish(ctx context.Context, subject string, data []byte) error {
	_, err := p.js.Publish(ctx, subject, data)
	return err
}
`
	fixture["outbox/outbox.go"] = `// Package outbox retries a publisher until it takes the event.
package outbox

import (
	"context"
	"time"

	"example.com/fixture/events"
)

// Relay delivers events.
type Relay struct{ pub events.Publisher }

// NewRelay returns a relay on pub.
func NewRelay(pub events.Publisher) *Relay { return &Relay{pub: pub} }

// Deliver publishes until the broker takes it.
func (r *Relay) Deliver(ctx context.Context, subject string, data []byte) {
	for r.pub.Publish(ctx, subject, data) != nil {
		time.Sleep(time.Second)
	}
}
`
	fixture["relay/main.go"] = `// Command relay wires the outbox to JetStream.
package main

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"example.com/fixture/natspub"
	"example.com/fixture/outbox"
)

func main() {
	nc, _ := nats.Connect("nats://a", nats.ReconnectBufSize(-1))
	js, _ := jetstream.New(nc)
	outbox.NewRelay(natspub.New(js)).Deliver(context.Background(), "orders", nil)
}
`
}

// TestInterfaceRetryAcrossPackages: the retry of outbox, a package
// without NATS, through events.Publisher is reported where the command
// converts natspub's JetStream publisher into it, by the in-process load
// and by go vet alike (the package fact travels through both).
func TestInterfaceRetryAcrossPackages(t *testing.T) {
	bin := buildLint(t)
	dir := setup(t)
	want := regexp.MustCompile(`^relay/main\.go:17:\d+: \*natspub\.JetStream flows into events\.Publisher; \(\*outbox\.Relay\)\.Deliver retries its Publish on failure at outbox\.go:19`)
	args := []string{"-json", "-categories=retry", "./..."}
	code, stdout, stderr := run(t, dir, bin, args...)
	if code != jsonExit(stdout) {
		t.Fatalf("natssend-lint %v: exit %d\n%s", args, code, stderr)
	}
	standalone := vetFindings(t, dir, stdout)
	code, stdout, stderr = run(t, dir, "go", append([]string{"vet", "-vettool=" + bin}, args...)...)
	if code != 0 {
		t.Fatalf("go vet %v: exit %d\n%s", args, code, stderr)
	}
	vet := vetFindings(t, dir, stdout)
	for name, fs := range map[string][]finding{"natssend-lint": standalone, "go vet": vet} {
		n := 0
		for _, f := range fs {
			if want.MatchString(f.Posn + ": " + f.Message) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d findings matching %s, want 1:\n%v", name, n, want, fs)
		}
	}
	if !slices.Equal(standalone, vet) {
		t.Errorf("natssend-lint and go vet differ:\nstandalone %v\ngo vet     %v", standalone, vet)
	}
}
