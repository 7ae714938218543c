package objstore

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestBatchRequestJSON: the hand-written batch request decodes to the
// same request as encoding/json's, for plain subjects (written directly)
// and for subjects that need escaping (encoding/json's own).
func TestBatchRequestJSON(t *testing.T) {
	for _, c := range []struct {
		from        uint64
		subject     string
		n, maxBytes int
	}{
		{1, "$O.claim_checks.C.abcdefghijklmnopqrstuvwxyz", 8, 8 << 20},
		{0, "s.a", 1, 0},
		{1 << 63, "s.b", 256, 16 << 20},
		{3, `s."quoted"\\back`, 2, 10},
		{3, "s.\x01\u00e9", 2, 10},
	} {
		got, err := batchRequestJSON(c.from, c.subject, c.n, c.maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(batchRequest{Seq: c.from, NextFor: c.subject, Batch: c.n, MaxBytes: c.maxBytes})
		if !bytes.Equal(got, want) {
			t.Errorf("batchRequestJSON(%d, %q, %d, %d) = %s, want %s", c.from, c.subject, c.n, c.maxBytes, got, want)
		}
	}
}

// TestDecodedReusesOnlySameBytes: Decoded decodes once per subject and
// content, decodes again when the bytes differ, keeps no error, and stays
// within memoSize subjects.
func TestDecodedReusesOnlySameBytes(t *testing.T) {
	r := &Reader{shared: &shared{}}
	calls := 0
	decode := func(b []byte) (any, error) {
		calls++
		if len(b) == 0 {
			return nil, json.Unmarshal(b, new(any))
		}
		return string(b), nil
	}
	for _, c := range []struct {
		subj, data string
		calls      int
	}{{"m.a", "x", 1}, {"m.a", "x", 1}, {"m.b", "x", 2}, {"m.a", "y", 3}, {"m.a", "y", 3}, {"m.a", "x", 4}} {
		v, err := r.Decoded(c.subj, []byte(c.data), decode)
		if err != nil || v != c.data || calls != c.calls {
			t.Fatalf("Decoded(%s, %s) = %v, %v after %d decodes; want %s after %d", c.subj, c.data, v, err, calls, c.data, c.calls)
		}
	}
	for range 2 {
		if _, err := r.Decoded("m.c", nil, decode); err == nil {
			t.Fatal("a decode error was not returned")
		}
	}
	if calls != 6 {
		t.Fatalf("%d decodes, want 6: an error must not be kept", calls)
	}
	for i := range 2 * memoSize {
		if _, err := r.Decoded(string(rune('a'+i%26))+string(rune(i)), []byte("z"), decode); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(r.memo.entries); n > memoSize {
		t.Fatalf("%d subjects kept, want at most %d", n, memoSize)
	}
}
