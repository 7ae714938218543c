package shim_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
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

func ExamplePublish() {
	s, stop := exampleServer(natstest.MaxPayload(64<<10), natstest.JetStream())
	defer stop()

	nc, err := shim.Connect(s.URL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("reports.rendered")
	if err != nil {
		log.Fatal(err)
	}

	// 1 MiB on a 64 KiB server: stored as a claim check, sent as a reference.
	report := make([]byte, 1<<20)
	if err := shim.Publish(nc, "reports.rendered", report); err != nil {
		log.Fatal(err)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(m.Data), m.Header.Get(claimcheck.HeaderSize))

	// A receiver resolves it (claimcheck.Store.Subscribe does this for you).
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	store, err := claimcheck.New(context.Background(), js)
	if err != nil {
		log.Fatal(err)
	}
	body, err := store.Resolve(context.Background(), m)
	fmt.Println(len(body), err)
	// Output:
	// 0 1048576
	// 1048576 <nil>
}

func ExampleConnect() {
	s, stop := exampleServer(natstest.MaxPayload(4096),
		natstest.WithAccount(natstest.Account{Name: "TENANT", User: "tenant", Password: "pw", MaxPayload: 512}))
	defer stop()

	// The account's 512-byte limit is known when Connect returns; with
	// nats.Connect, MaxPayload would still say 4096 for a moment.
	nc, err := shim.Connect(s.UserURL("tenant"))
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	fmt.Println(nc.MaxPayload())
	// Output: 512
}
