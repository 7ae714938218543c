// Package other declares look-alikes of the nats.go API.
package other

// Conn is not a nats.Conn.
type Conn struct{}

// Publish is not (*nats.Conn).Publish.
func (c *Conn) Publish(subj string, data []byte) error { return nil }

// Publish is a package-level function named Publish.
func Publish(subj string, data []byte) error { return nil }
