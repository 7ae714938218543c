package app

import (
	"delegation"

	"github.com/nats-io/nats.go"
)

// graft's own test: the deprecated global, which any package may change.
func raftNodes(url string) error {
	opts := &nats.DefaultOptions
	opts.Url = url
	_, err := delegation.NewNatsRpc(opts) // want `unjudged call of NewNatsRpc: options in package variable DefaultOptions, which any package may change`
	return err
}

func raftDefaults(url string) error {
	o := nats.GetDefaultOptions()
	o.Url = url
	o.Name = "raft"
	_, err := delegation.NewNatsRpc(&o) // want `call of NewNatsRpc connects without nats.ReconnectBufSize\(-1\)`
	return err
}

func raftNoBuffer(url string) error {
	o := nats.GetDefaultOptions()
	o.Url = url
	o.ReconnectBufSize = -1
	_, err := delegation.NewNatsRpc(&o)
	return err
}

func raftLiteral(url string) error {
	_, err := delegation.NewNatsRpc(&nats.Options{Url: url, AllowReconnect: true, MaxReconnect: -1}) // want `call of NewNatsRpc connects without nats.ReconnectBufSize\(-1\)`
	if err != nil {
		return err
	}
	// Reconnecting is off in a literal that does not allow it: no buffer.
	_, err = delegation.NewNatsRpc(&nats.Options{Url: url})
	return err
}

func raftPointer(url string, bufSize int) error {
	opts := &nats.Options{Url: url, AllowReconnect: true}
	opts.ReconnectBufSize = 4096
	if _, err := delegation.NewNatsRpc(opts); err != nil { // want `call of NewNatsRpc connects with ReconnectBufSize\(4096\) still buffers`
		return err
	}
	safe := &nats.Options{Url: url, AllowReconnect: true, ReconnectBufSize: -1}
	_, err := delegation.NewNatsRpc(safe)
	return err
}

func raftValue(url string) error {
	o := nats.GetDefaultOptions()
	o.Url = url
	_, err := delegation.NewFromOptions(o, "raft") // want `call of NewFromOptions connects without nats.ReconnectBufSize\(-1\)`
	return err
}

// Near misses: a pointer handed to another function first, or copied,
// may be changed there: not judged.
func raftConfigured(url string) error {
	opts := &nats.Options{Url: url, AllowReconnect: true}
	configure(opts)
	_, err := delegation.NewNatsRpc(opts) // want `unjudged call of NewNatsRpc: options pointer opts passed on or copied`
	return err
}

func raftAliased(url string) error {
	o := nats.GetDefaultOptions()
	p := &o
	p.ReconnectBufSize = -1
	_, err := delegation.NewNatsRpc(&o) // want `unjudged call of NewNatsRpc: the address of o is taken`
	return err
}

func configure(o *nats.Options) { o.ReconnectBufSize = -1 }
