package objstore

import (
	"sync"
	"time"
)

// The stall rule: when a batch whose replies do not come is given up as
// lost (ErrStalled) and asked for again.
//
// A batch's replies queue behind every byte the server is already
// sending the connection: on a loaded host (a starved CPU, a slow link,
// many reads at once) they can take longer than any fixed time to start,
// and asking again then only adds what is owed, which slows everything
// more. So a batch is given up only when, for at least its wait since
// its last progress (its request, its latest reply, or the moment Next
// began waiting, whichever is latest), either
//   - nothing at all arrived on the connection's reply inbox and nothing
//     waits there to be routed: the request or its replies were lost (a
//     reconnect, a dead server, a dropped frame); or
//   - the connection has received, since that progress, more than it was
//     owed then (this batch's bytes and every other batch's asked for and
//     not received, the Budget's use) times attempt+2: what was queued
//     ahead of the batch has had the time to arrive at the rate the
//     connection actually receives, and the batch's own did not.
//
// The wait is the caller's stall time, doubled for each stall of the same
// range before (attempt, at most maxStallDoublings). A batch given up
// keeps its budget until its replies arrive (see flight.close), so the
// request asked again waits for room rather than doubling what is owed.

// maxStallDoublings caps how often a range's wait doubles.
const maxStallDoublings = 3

// stallSlack is what the connection may receive beyond what was owed
// before the second rule applies: a few chunks that other reads asked
// for just after the batch and a faster replica served first.
const stallSlack = 4 << 20

// lost reports whether f counts as stalled (see the stall rule) for a
// Next that began waiting at since, with the caller's stall time.
func (f *flight) lost(since time.Time, stall time.Duration) bool {
	m := f.m
	m.mu.Lock()
	defer m.mu.Unlock()
	from := since
	if f.progressAt.After(from) {
		from = f.progressAt
	}
	wait := stall << min(f.attempt, maxStallDoublings)
	now := time.Now()
	if now.Sub(from) < wait {
		return false
	}
	if m.quietLocked(from, wait) {
		return true
	}
	return m.received.Load()-f.mark > uint64(f.owed)*uint64(f.attempt+2)+stallSlack
}

// pendingLocked returns the bytes the inbox subscription holds that are
// not yet routed; m.mu is held.
func (m *mux) pendingLocked() int {
	if m.sub == nil {
		return 0
	}
	_, n, err := m.sub.Pending()
	if err != nil {
		return 0
	}
	return n
}

// stallKey names a range a batch asks for: its subject and first
// sequence.
type stallKey struct {
	subject string
	from    uint64
}

// stallNote is how often a range's batches stalled, and when last.
type stallNote struct {
	n  int
	at time.Time
}

// stalls remembers, per range, how often batches asking for it were
// given up as stalled, so that the next request for it waits longer.
// A range is forgotten when a batch for it makes progress, or a while
// after its last stall.
type stalls struct {
	mu    sync.Mutex
	notes map[stallKey]stallNote
}

// stallMemory is how long a range's stalls are remembered, and
// stallNotes how many ranges at most.
const (
	stallMemory = time.Minute
	stallNotes  = 1024
)

// attempt returns how often the range's batches stalled.
func (s *stalls) attempt(k stallKey) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notes[k].n
}

// stalled records that a batch stalled: its range from the first missing
// sequence on had attempt stalls before.
func (s *stalls) stalled(k stallKey, attempt int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.notes == nil {
		s.notes = make(map[stallKey]stallNote)
	}
	if len(s.notes) >= stallNotes {
		for key, n := range s.notes {
			if now.Sub(n.at) > stallMemory {
				delete(s.notes, key)
			}
		}
		if len(s.notes) >= stallNotes {
			clear(s.notes)
		}
	}
	s.notes[k] = stallNote{n: attempt + 1, at: now}
}

// progressed forgets a range once a batch for it made progress.
func (s *stalls) progressed(k stallKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.notes, k)
}
