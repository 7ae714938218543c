package wire

import "testing"

// TestRandomTokenUsesEveryCharacter: over 512 tokens of 22 characters
// every position takes many of the 64 values (a position fed by too few
// random bits, or a counter, takes few).
func TestRandomTokenUsesEveryCharacter(t *testing.T) {
	seen := make([]map[byte]bool, 22)
	for i := range seen {
		seen[i] = map[byte]bool{}
	}
	for range 512 {
		var b [22]byte
		RandomToken(b[:])
		for i, c := range b {
			seen[i][c] = true
		}
	}
	for i, s := range seen {
		if len(s) < 48 { // 64 values, 512 draws: fewer than 48 has odds far below 1e-9
			t.Errorf("position %d took %d values", i, len(s))
		}
	}
}
