package wire

import "math/rand/v2"

// TokenChars are the characters of natssend's random subject tokens: 64
// of them, each valid in a subject token, so each carries 6 random bits.
const TokenChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// RandomToken fills b with characters of TokenChars, 6 bits each of
// math/rand/v2's top-level generator (ChaCha8, seeded from the system's
// entropy, per thread): no token tells anything of the next, as a counter
// or a NUID does to whoever saw a few. 16 characters are 96 bits.
func RandomToken(b []byte) {
	var r uint64
	for i := range b {
		if i%10 == 0 {
			r = rand.Uint64() // 10 characters of 6 bits each use 60 of its 64
		}
		b[i] = TokenChars[r&63]
		r >>= 6
	}
}
