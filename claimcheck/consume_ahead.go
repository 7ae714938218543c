package claimcheck

import (
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// aheadConsume is Consume's ConsumeContext. The handler runs on a worker
// goroutine of its own, so that nats.go's Consume callback receives and
// resolves the next message while the handler handles the current one:
// when the handler returns, its next message is there with its payload
// read. nats.go keeps one message pulled (PullMaxMessages(1) by default):
// the one being resolved or waiting for the worker, which is kept in
// progress (InProgress) until the worker takes it, so no message waits
// with its AckWait running unseen.
type aheadConsume struct {
	jetstream.ConsumeContext // nats.go's

	work     chan func()   // hands a message's handling to the worker
	stop     chan struct{} // closed by Stop, or once nats.go's consuming ended
	stopOnce sync.Once
	closed   chan struct{} // closed when nats.go's consuming ended and the worker exited
}

func newAheadConsume() *aheadConsume {
	return &aheadConsume{work: make(chan func()), stop: make(chan struct{}), closed: make(chan struct{})}
}

// start runs the worker and watches nats.go's consuming end.
func (a *aheadConsume) start(cc jetstream.ConsumeContext) {
	a.ConsumeContext = cc
	worked := make(chan struct{})
	go func() {
		defer close(worked)
		for {
			select {
			case job := <-a.work:
				job()
			case <-a.stop:
				return
			}
		}
	}()
	go func() {
		<-cc.Closed()
		a.halt()
		<-worked
		close(a.closed)
	}()
}

// handOff waits until the worker takes job, or consuming stops (false:
// the job did not run).
func (a *aheadConsume) handOff(job func()) bool {
	select {
	case <-a.stop:
		return false
	default:
	}
	select {
	case a.work <- job:
		return true
	case <-a.stop:
		return false
	}
}

func (a *aheadConsume) halt() { a.stopOnce.Do(func() { close(a.stop) }) }

// Stop stops consuming: no message is handled after the one the handler
// may be handling now; a message resolved and waiting for the worker is
// Nak'd, to be redelivered at once.
func (a *aheadConsume) Stop() {
	a.halt()
	a.ConsumeContext.Stop()
}

// Drain stops pulling and handles the messages already received, then
// stops (jetstream.ConsumeContext.Drain).
func (a *aheadConsume) Drain() { a.ConsumeContext.Drain() }

// Closed is closed once consuming has stopped and the handler has
// returned for the last time.
func (a *aheadConsume) Closed() <-chan struct{} { return a.closed }
