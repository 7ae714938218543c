package connlimit

// RoundTrips returns the number of round trips s has made to confirm the
// limit.
func RoundTrips(s *State) int64 { return s.roundTrips.Load() }
