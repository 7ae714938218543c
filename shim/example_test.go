package shim_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/natstest"
	"github.com/natssend/natssend/shim"
)

// exampleServer starts an embedded server for the examples; a real
// service connects to its deployment's URL instead.
func exampleServer(opts ...natstest.Option) (*natstest.Server, func()) {
	s, err := natstest.New(opts...)
	if err != nil {
		log.Fatal(err)
	}
	return s, s.Close
}

func ExampleClient_Request() {
	s, stop := exampleServer(natstest.MaxPayload(64 << 10))
	defer stop()

	nc, err := shim.Connect(s.URL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()

	// A responder that echoes in upper case.
	if _, err := nc.Subscribe("greet", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		if len(req.Data) == 0 {
			return nil, shim.InvalidArgument("empty name")
		}
		return []byte("hello, " + string(req.Data)), nil
	})); err != nil {
		log.Fatal(err)
	}

	c := shim.NewClient(nc, shim.WithTimeout(2*time.Second))
	reply, err := c.Request(context.Background(), "greet", []byte("ada"))
	fmt.Println(string(reply.Data), err)

	_, err = c.Request(context.Background(), "greet", nil)
	fmt.Println(err, shim.Classify(err))

	_, err = c.Request(context.Background(), "greet", make([]byte, 100<<10))
	fmt.Println(errors.Is(err, shim.ErrPayloadTooLarge), shim.Classify(err))
	// Output:
	// hello, ada <nil>
	// natssend: remote INVALID_ARGUMENT: empty name rejected
	// true not run
}
