package xfer

import (
	"hash"
	"sync"
	"sync/atomic"
)

// digestQueue is how many slices Add may queue ahead of the hashing
// before it waits; a stream's credit bounds their bytes.
const digestQueue = 256

// Digest is the digest (NewHash) of a stream's body, computed on a goroutine of its
// own in the order Add is given the pieces, so that hashing overlaps with
// sending (the responder's copy and publish) instead of lengthening every
// frame's path. Add and Sum must not be called concurrently with each
// other (the stream's lock orders them); Stop may be called from anywhere,
// any number of times.
// The goroutine starts at the first Add and ends at Sum or Stop.
type Digest struct {
	ch     chan []byte
	quit   chan struct{}
	done   chan struct{}
	stop   sync.Once
	closed bool // Sum closed ch
	added  int64
	hashed atomic.Int64
	h      hash.Hash
}

// NewDigest returns an empty digest of the kind alg (DigestSHA256 for one
// this version does not know).
func NewDigest(alg byte) *Digest {
	h := NewHash(alg)
	if h == nil {
		h = NewHash(DigestSHA256)
	}
	return &Digest{quit: make(chan struct{}), done: make(chan struct{}), h: h}
}

// Add queues p to be hashed after what was added before. p must not change
// until Hashed reaches the end of it. Add after Sum or Stop does nothing.
func (d *Digest) Add(p []byte) {
	if len(p) == 0 || d.closed {
		return
	}
	if d.ch == nil {
		d.ch = make(chan []byte, digestQueue)
		go d.run()
	}
	select {
	case d.ch <- p:
		d.added += int64(len(p))
	case <-d.quit:
	}
}

func (d *Digest) run() {
	defer close(d.done)
	for {
		select {
		case p, ok := <-d.ch:
			if !ok {
				return
			}
			d.h.Write(p)
			d.hashed.Add(int64(len(p)))
		case <-d.quit:
			return
		}
	}
}

// Hashed returns how many bytes have been hashed: the pieces added up to
// there may be reused.
func (d *Digest) Hashed() int64 { return d.hashed.Load() }

// Sum waits until everything added is hashed, ends the goroutine and
// appends the digest to b. It returns nil when Stop came first.
func (d *Digest) Sum(b []byte) []byte {
	if !d.closed {
		d.closed = true
		if d.ch == nil {
			return d.h.Sum(b) // nothing was added: no goroutine
		}
		close(d.ch)
	}
	if d.ch == nil {
		return d.h.Sum(b)
	}
	<-d.done
	if d.hashed.Load() != d.added {
		return nil
	}
	return d.h.Sum(b)
}

// Stop ends the goroutine without a sum (the stream ended otherwise).
func (d *Digest) Stop() {
	d.stop.Do(func() { close(d.quit) })
}
