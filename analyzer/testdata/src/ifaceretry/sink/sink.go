// Package sink queues events for the targets that plugins register, // want package:"retries through sink.Target.Send"
// the way an object store's notification targets are: the core retries a
// target until it takes the event, and imports none of them.
package sink

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Target is where a plugin delivers events.
type Target interface {
	Send(ctx context.Context, key string, value []byte) error
	Close() error
}

var (
	mu      sync.Mutex
	targets = map[string]Target{}
)

// Register makes t available under name; plugins call it.
func Register(name string, t Target) {
	mu.Lock()
	defer mu.Unlock()
	targets[name] = t
}

type item struct {
	key   string
	value []byte
}

// Queue delivers items to one target.
type Queue struct {
	target     Target
	retryEvery time.Duration
}

// Open returns the queue of the target registered under name.
func Open(name string) (*Queue, error) {
	mu.Lock()
	defer mu.Unlock()
	t, ok := targets[name]
	if !ok {
		return nil, errors.New("sink: no target " + name)
	}
	return &Queue{target: t, retryEvery: 3 * time.Second}, nil
}

func (q *Queue) run(ctx context.Context, items <-chan item) {
	for it := range items {
		for ctx.Err() == nil {
			if err := q.target.Send(ctx, it.key, it.value); err != nil {
				time.Sleep(q.retryEvery)
				continue
			}
			break
		}
	}
}
