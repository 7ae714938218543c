package delegation

import (
	"errors"

	"github.com/nats-io/nats.go"
)

// PublisherConfig is a publisher's configuration, as watermill-nats'
// is: the connection's options are a field the caller fills in.
type PublisherConfig struct {
	// URL is the NATS URL.
	URL string
	// NatsOptions are custom options for the connection.
	NatsOptions []nats.Option
	// Marshaler encodes messages.
	Marshaler func(any) ([]byte, error)
}

func (c *PublisherConfig) setDefaults() {
	if c.Marshaler == nil {
		c.Marshaler = func(any) ([]byte, error) { return nil, nil }
	}
}

// Validate checks the configuration.
func (c PublisherConfig) Validate() error {
	if c.Marshaler == nil {
		return errors.New("PublisherConfig.Marshaler is missing")
	}
	return nil
}

// Publisher publishes over its own connection.
type Publisher struct{ nc *nats.Conn }

// NewPublisher connects with the options of the configuration its
// caller passes: its calls are the connects.
func NewPublisher(config PublisherConfig, logger func(string)) (*Publisher, error) { // want NewPublisher:"connects with parameter 0's field NatsOptions, else buffer default"
	config.setDefaults()
	if err := config.Validate(); err != nil {
		return nil, err
	}
	conn, err := nats.Connect(config.URL, config.NatsOptions...) // want `delegated nats.Connect to the calls of exported NewPublisher: its options come from field NatsOptions of parameter config`
	if err != nil {
		return nil, err
	}
	return &Publisher{nc: conn}, nil
}

// SubscriberConfig is a subscriber's configuration, taken by pointer.
type SubscriberConfig struct {
	URL         string
	NatsOptions []nats.Option
}

// NewSubscriber connects with the configuration's options.
func NewSubscriber(config *SubscriberConfig) (*nats.Conn, error) { // want NewSubscriber:"connects with parameter 0's field NatsOptions, else buffer default"
	return nats.Connect(config.URL, config.NatsOptions...) // want `delegated nats.Connect to the calls of exported NewSubscriber: its options come from field NatsOptions of parameter config`
}

// Near miss: a method that adds to the options before the connect. Not
// followed: unjudged.
func (c *SubscriberConfig) withName() { c.NatsOptions = append(c.NatsOptions, nats.Name("sub")) }

// NewNamedSubscriber names the connection first.
func NewNamedSubscriber(config SubscriberConfig) (*nats.Conn, error) {
	config.withName()
	return nats.Connect(config.URL, config.NatsOptions...) // want `unjudged nats.Connect: exported field SubscriberConfig.NatsOptions, which other packages may set: look at where they make SubscriberConfig values`
}

// Near miss: the function sets the field itself.
func NewDefaultSubscriber(config SubscriberConfig) (*nats.Conn, error) {
	if len(config.NatsOptions) == 0 {
		config.NatsOptions = []nats.Option{nats.Name("default")}
	}
	return nats.Connect(config.URL, config.NatsOptions...) // want `unjudged nats.Connect: exported field SubscriberConfig.NatsOptions, which other packages may set: look at where they make SubscriberConfig values`
}
