package connlimit

// Verdict is what a send does with a message.
type Verdict int

const (
	// Fits means the message goes as it is.
	Fits Verdict = iota + 1
	// ClaimCheck means the body goes to a claim check store and a reference
	// is sent instead.
	ClaimCheck
	// Refuse means the message is refused before anything is stored or sent.
	Refuse
)

// String returns the verdict's name.
func (v Verdict) String() string {
	switch v {
	case Fits:
		return "fits"
	case ClaimCheck:
		return "claim check"
	case Refuse:
		return "refuse"
	}
	return "invalid"
}

// NoClaimCheck is the refSize of Decide when no claim check is possible
// (no store, a body above the store's maximum).
const NoClaimCheck = -1

// Decide is the one decision every natssend send makes, after its input
// checks and before any irreversible work: size is what the server will
// count (header block + body, plus any header bytes still to be added),
// limit the effective limit (the connection's max_payload, lowered by a
// stream's max_msg_size or a caller's cap), refSize what the claim-check
// reference would count or NoClaimCheck. The server refuses sizes above
// the limit (it compares with >), so a size equal to the limit fits.
func Decide(size, limit, refSize int64) Verdict {
	switch {
	case size <= limit:
		return Fits
	case refSize >= 0 && refSize <= limit:
		return ClaimCheck
	}
	return Refuse
}
