package claimcheck

import (
	"bytes"
	"testing"
)

// TestJoinerAllocatesAtHalf: the payload's buffer is allocated at the
// chunk that brings the bytes received to half the declared size, not
// one byte earlier, and the payload is the chunks in order.
func TestJoinerAllocatesAtHalf(t *testing.T) {
	j := joiner{size: 10}
	j.add([]byte("abcd")) // 4 of 10: below half
	if j.buf != nil {
		t.Fatal("allocated at 4 of 10 bytes")
	}
	j.add([]byte("e")) // 5 of 10: half
	if j.buf == nil || cap(j.buf) != 10 || j.held != nil {
		t.Fatalf("at 5 of 10 bytes: buf %q cap %d, %d chunks held", j.buf, cap(j.buf), len(j.held))
	}
	j.add([]byte("fghij"))
	if got := j.bytes(); !bytes.Equal(got, []byte("abcdefghij")) {
		t.Fatalf("payload %q", got)
	}

	odd := joiner{size: 11}
	odd.add([]byte("abcde")) // 10 < 11
	if odd.buf != nil {
		t.Fatal("allocated at 5 of 11 bytes")
	}
}

// TestJoinerOneChunk: a payload of one chunk is that chunk's buffer.
func TestJoinerOneChunk(t *testing.T) {
	p := []byte("whole")
	j := joiner{size: len(p)}
	j.add(p)
	if got := j.bytes(); &got[0] != &p[0] || len(got) != len(p) {
		t.Fatal("a one-chunk payload was copied")
	}
}

// TestJoinerShortChunks: chunks that never reach half the declared size
// allocate nothing of that size (readAll then fails on the size check).
func TestJoinerShortChunks(t *testing.T) {
	j := joiner{size: 1 << 30}
	for range 8 {
		j.add(make([]byte, 1<<10))
	}
	if j.buf != nil {
		t.Fatal("allocated the declared size for 8 KiB of chunks")
	}
}
