package objstore

import (
	"bytes"
	"sync"
)

// memo keeps what a decoder made of the last message read on each of a
// few subjects, with the bytes it was made from, so that many reads of
// one object (a fan-out: every subscriber resolves the same claim check)
// decode its meta data once. A value is handed out only for the very
// bytes it was made from, so it is exactly what decoding them again
// would give.
type memo struct {
	mu      sync.Mutex
	entries map[string]memoEntry
}

type memoEntry struct {
	data []byte
	val  any
}

// memoSize bounds the subjects a memo keeps; past it, an arbitrary one
// is forgotten for each new one.
const memoSize = 256

// Decoded returns decode(data) for data read on subject, reusing the
// value made for the same subject and the same bytes before. The value
// is shared by every caller that gets it: treat it as read-only. Errors
// are not kept.
func (r *Reader) Decoded(subject string, data []byte, decode func([]byte) (any, error)) (any, error) {
	m := &r.memo
	m.mu.Lock()
	e, ok := m.entries[subject]
	m.mu.Unlock()
	if ok && bytes.Equal(e.data, data) {
		return e.val, nil
	}
	v, err := decode(data)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = make(map[string]memoEntry)
	}
	if _, ok := m.entries[subject]; !ok && len(m.entries) >= memoSize {
		for k := range m.entries {
			delete(m.entries, k)
			break
		}
	}
	m.entries[subject] = memoEntry{data: data, val: v}
	return v, nil
}
