package delegation

import "github.com/nats-io/nats.go"

// RPCDriver is a consensus transport over NATS, as graft's is.
type RPCDriver struct{ nc *nats.Conn }

// NewNatsRpc creates the driver; the connection uses the options passed
// in, which it only reads: its calls are the connects.
func NewNatsRpc(opts *nats.Options) (*RPCDriver, error) { // want NewNatsRpc:"connects with parameter 0's options, else buffer default"
	nc, err := opts.Connect() // want `delegated \(nats.Options\).Connect to the calls of exported NewNatsRpc: its options come from parameter opts`
	if err != nil {
		return nil, err
	}
	return &RPCDriver{nc: nc}, nil
}

// NewFromOptions takes the options by value.
func NewFromOptions(o nats.Options, name string) (*RPCDriver, error) { // want NewFromOptions:"connects with parameter 0's options, else buffer default"
	if o.Name == "" {
		name = "raft"
	}
	_ = name
	nc, err := o.Connect() // want `delegated \(nats.Options\).Connect to the calls of exported NewFromOptions: its options come from parameter o`
	if err != nil {
		return nil, err
	}
	return &RPCDriver{nc: nc}, nil
}

// Near miss: the function sets a field of the caller's options first;
// not followed.
func NewNamed(opts *nats.Options, name string) (*RPCDriver, error) {
	opts.Name = name
	nc, err := opts.Connect() // want `unjudged \(nats.Options\).Connect: options value from parameter opts, changed or passed on`
	if err != nil {
		return nil, err
	}
	return &RPCDriver{nc: nc}, nil
}

// Near miss: the options go to another function before the connect,
// which may change them.
func NewTuned(opts *nats.Options) (*RPCDriver, error) {
	tune(opts)
	nc, err := opts.Connect() // want `unjudged \(nats.Options\).Connect: options value from parameter opts, changed or passed on`
	if err != nil {
		return nil, err
	}
	return &RPCDriver{nc: nc}, nil
}

func tune(o *nats.Options) { o.ReconnectBufSize = -1 }
