package receivers

import (
	"context"
	"encoding/json"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

type api struct {
	store *claimcheck.Store
}

func (a *api) register(nc *nats.Conn) (micro.Service, error) {
	srv, err := micro.AddService(nc, micro.Config{
		Name:    "catalog",
		Version: "1.0.0",
		Endpoint: &micro.EndpointConfig{
			Subject: "catalog.get",
			Handler: micro.HandlerFunc(a.get), // want `micro.HandlerFunc handler reads the request without resolving claim checks.*read it with shim.ResolveMicro`
		},
	})
	if err != nil {
		return nil, err
	}
	g := srv.AddGroup("catalog")
	if err := g.AddEndpoint("put", micro.HandlerFunc(a.put)); err != nil {
		return nil, err
	}
	err = g.AddEndpoint("search", micro.ContextHandler(context.Background(), func(ctx context.Context, req micro.Request) { // want `micro.ContextHandler handler reads the request`
		var q struct{ Term string }
		if err := json.Unmarshal(req.Data(), &q); err != nil {
			shim.RespondMicroError(req, "400", err.Error())
		}
	}))
	return srv, err
}

func (a *api) get(req micro.Request) { // want get:`sends via shim.RespondMicro`
	shim.RespondMicro(req, req.Data(), nil)
}

// Resolved: fine.
func (a *api) put(req micro.Request) { // want put:`sends via shim.ResolveMicro`
	data, err := shim.ResolveMicro(context.Background(), a.store, req)
	if err != nil {
		shim.RespondMicroError(req, "500", err.Error())
		return
	}
	shim.RespondMicro(req, data, nil)
}

// A shim handler is not a raw receive path: it answers a claim-checked
// request it cannot serve with an error, it does not lose it.
func (a *api) rpc(nc *nats.Conn) error {
	_, err := nc.Subscribe("catalog.rpc", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		return req.Data, nil
	}, shim.Conn(nc)))
	return err
}
