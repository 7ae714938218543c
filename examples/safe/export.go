package orders

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/shim"
)

// ExportSubject is the subject of the streamed export.
const ExportSubject = "orders.export"

// ServeExport answers Export with every order list yields, one JSON line
// each, as a transfer stream: any number of orders of any size, the
// service's memory bounded by the caller's window (a slow reader slows
// list), and list's context ended when the caller goes away.
func ServeExport(nc *nats.Conn, list func(ctx context.Context, yield func(Order) error) error) (*nats.Subscription, error) {
	return nc.QueueSubscribe(ExportSubject, "orders", shim.StreamHandler(func(ctx context.Context, _ *nats.Msg, w *shim.StreamWriter) error {
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		return list(ctx, func(o Order) error { return enc.Encode(o) })
	}, shim.Conn(nc)))
}

// Export reads every order from the service and calls h for each, as they
// arrive. It returns the number of orders and nil only when the export
// arrived complete (the stream's end and digest matched); an export cut
// short is an error matching io.ErrUnexpectedEOF, and the orders h saw
// are then a prefix of the export.
func Export(ctx context.Context, c *shim.Client, h func(Order) error) (int, error) {
	rs, err := c.RequestStream(ctx, ExportSubject, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = rs.Close() }()
	dec := json.NewDecoder(rs)
	for n := 0; ; n++ {
		var o Order
		switch err := dec.Decode(&o); {
		case errors.Is(err, io.EOF):
			return n, nil
		case err != nil:
			return n, err
		}
		if err := h(o); err != nil {
			return n, err
		}
	}
}
