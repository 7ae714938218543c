// Package helper is hand-written code without NATS: its Do is a retry
// helper for its callers (a fact).
package helper

// Do calls f until it succeeds.
func Do(f func() error) error { // want Do:`retries parameter 0`
	for {
		if err := f(); err == nil {
			return nil
		}
	}
}
