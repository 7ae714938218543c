// Package svc is a service of one's own that pins natssend-lint with the
// go.mod tool directive (see ../README.md): the quote service answers
// price requests and announces price changes, through natssend's shim.
package svc

import (
	"context"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/shim"
)

// Serve answers "quotes.price" requests with price(sku), on the
// connection nc (made with shim.Connect).
func Serve(nc *nats.Conn, price func(ctx context.Context, sku string) (int, error)) (*nats.Subscription, error) {
	return nc.Subscribe("quotes.price", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		if len(req.Data) == 0 {
			return nil, shim.InvalidArgument("no SKU")
		}
		p, err := price(ctx, string(req.Data))
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(p), 10), nil
	}, shim.Conn(nc)))
}

// Price asks for the price of sku, once.
func Price(ctx context.Context, c *shim.Client, sku string) (int, error) {
	reply, err := c.Request(ctx, "quotes.price", []byte(sku))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(reply.Data))
}

// Announce publishes a price change; a message over the broker's limit
// travels as a claim check.
func Announce(ctx context.Context, nc *nats.Conn, sku string, price int) error {
	return shim.PublishContext(ctx, nc, "quotes.changed."+sku, strconv.AppendInt(nil, int64(price), 10))
}
