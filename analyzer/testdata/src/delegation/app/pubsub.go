package app

import (
	"delegation"
	"time"

	"github.com/nats-io/nats.go"
)

// As watermill-nats' examples build their publisher and subscriber.
func pubSub(url string, logger func(string)) error {
	options := []nats.Option{
		nats.RetryOnFailedConnect(true),
		nats.Timeout(30 * time.Second),
		nats.ReconnectWait(time.Second),
	}
	pub, err := delegation.NewPublisher( // want `call of NewPublisher connects without nats.ReconnectBufSize\(-1\)`
		delegation.PublisherConfig{
			URL:         url,
			NatsOptions: options,
		},
		logger,
	)
	if err != nil {
		return err
	}
	_ = pub
	sub, err := delegation.NewSubscriber(&delegation.SubscriberConfig{URL: url, NatsOptions: options}) // want `call of NewSubscriber connects without nats.ReconnectBufSize\(-1\)`
	if err != nil {
		return err
	}
	sub.Close()
	// No options at all: the defaults buffer.
	_, err = delegation.NewPublisher(delegation.PublisherConfig{URL: url}, logger) // want `call of NewPublisher connects without nats.ReconnectBufSize\(-1\)`
	return err
}

func pubSubSafe(url string, logger func(string)) error {
	options := []nats.Option{nats.Timeout(30 * time.Second), nats.ReconnectBufSize(-1)}
	config := delegation.PublisherConfig{URL: url, NatsOptions: options}
	if _, err := delegation.NewPublisher(config, logger); err != nil {
		return err
	}
	subConfig := &delegation.SubscriberConfig{URL: url}
	subConfig.NatsOptions = options
	_, err := delegation.NewSubscriber(subConfig)
	return err
}

func pubSubLater(url string, logger func(string), tuned bool) error {
	config := delegation.PublisherConfig{URL: url, NatsOptions: []nats.Option{nats.ReconnectBufSize(-1)}}
	config.NatsOptions = []nats.Option{nats.Name("pub")}
	if _, err := delegation.NewPublisher(config, logger); err != nil { // want `call of NewPublisher connects without nats.ReconnectBufSize\(-1\)`
		return err
	}
	// Near misses: the field set on some paths only, or the value handed
	// to another function first, is not judged.
	other := delegation.PublisherConfig{URL: url}
	if tuned {
		other.NatsOptions = []nats.Option{nats.ReconnectBufSize(-1)}
	}
	if _, err := delegation.NewPublisher(other, logger); err != nil { // want `unjudged call of NewPublisher: field NatsOptions of other set in a way not followed`
		return err
	}
	third := &delegation.PublisherConfig{URL: url}
	tune(third)
	if _, err := delegation.NewPublisher(*third, logger); err != nil { // want `unjudged call of NewPublisher: options in field NatsOptions of a value not followed`
		return err
	}
	fourth := &delegation.SubscriberConfig{URL: url}
	tuneSub(fourth)
	_, err := delegation.NewSubscriber(fourth) // want `unjudged call of NewSubscriber: fourth passed on or changed by a method`
	return err
}

func tuneSub(c *delegation.SubscriberConfig) {
	c.NatsOptions = append(c.NatsOptions, nats.ReconnectBufSize(-1))
}

func tune(c *delegation.PublisherConfig) {
	c.NatsOptions = append(c.NatsOptions, nats.ReconnectBufSize(-1))
}
