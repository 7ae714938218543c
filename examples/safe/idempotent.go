package orders

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/shim"
)

// CreateAttempts is how often CreateOnce sends one creation at most.
const CreateAttempts = 3

// CreateOnce asks the order service to create o under the operation ID
// opID, sending it up to CreateAttempts times within ctx's deadline: also
// after an unknown outcome (a timeout, a lost connection), because the
// service makes the creation conditional on opID (see CreateInKV), so a
// repeat answers with the order the first attempt created. Use one opID
// per order the user meant to create, and the same opID when calling
// again for it.
func CreateOnce(ctx context.Context, c *shim.Client, opID string, o Order) (*Receipt, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	reply, err := c.Request(ctx, "orders.create", data, shim.OperationID(opID), shim.Attempts(CreateAttempts))
	if err != nil {
		return nil, err
	}
	var r Receipt
	return &r, json.Unmarshal(reply.Data, &r)
}

// CreateInKV returns a create function for Serve that stores each order in
// kv with Create keyed by the caller's operation ID: the check for an
// earlier attempt and the write are one atomic step on the server (Create
// fails with ErrKeyExists when the key exists), so no crash between a
// de-duplication record and the write can lose or repeat an order. A
// repeated attempt finds the stored order and answers with its receipt,
// the same answer as the first time (the same revision). A request without
// an operation ID, with one that is not a valid key, or reusing one for
// another order is rejected before anything is written.
func CreateInKV(kv jetstream.KeyValue) func(context.Context, Order) (Receipt, error) {
	return func(ctx context.Context, o Order) (Receipt, error) {
		id := shim.OperationIDFrom(ctx)
		switch {
		case id == "":
			return Receipt{}, shim.InvalidArgument("orders.create needs an operation ID")
		case !validKey(id):
			return Receipt{}, shim.InvalidArgument("operation ID %q is not a valid key", id)
		}
		data, err := json.Marshal(o)
		if err != nil {
			return Receipt{}, err
		}
		//natssend:reviewed the order came in a request on this connection; its JSON is no larger
		rev, err := kv.Create(ctx, id, data)
		if err == nil {
			return Receipt{ID: o.ID, Status: "created", Revision: rev}, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return Receipt{}, err // INTERNAL: the caller cannot know; it may send again
		}
		e, err := kv.Get(ctx, id)
		if err != nil {
			return Receipt{}, err
		}
		var stored Order
		if err := json.Unmarshal(e.Value(), &stored); err != nil {
			return Receipt{}, err
		}
		if stored.ID != o.ID {
			return Receipt{}, shim.Reject("ALREADY_EXISTS", "operation ID "+id+" was used for order "+stored.ID)
		}
		return Receipt{ID: stored.ID, Status: "created", Revision: e.Revision()}, nil
	}
}

// validKey reports whether id can be a KeyValue key.
func validKey(id string) bool {
	if id == "" || id[0] == '.' || id[len(id)-1] == '.' {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '=', c == '/', c == '.':
		default:
			return false
		}
	}
	return true
}
