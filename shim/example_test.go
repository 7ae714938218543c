package shim_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

// exampleServer starts a nats-server in this process with opts (on a random
// local port, JetStream in a temporary directory when opts.JetStream is
// set) and returns its URL and a function that stops it. A service
// connects to its deployment's URL instead.
func exampleServer(opts *server.Options) (url string, stop func()) {
	dir, err := os.MkdirTemp("", "natssend-example")
	if err != nil {
		log.Fatal(err)
	}
	opts.Host, opts.Port, opts.StoreDir = "127.0.0.1", -1, dir
	opts.NoLog, opts.NoSigs = true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		log.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		log.Fatal("nats-server did not start")
	}
	return srv.ClientURL(), func() {
		srv.Shutdown()
		srv.WaitForShutdown()
		_ = os.RemoveAll(dir)
	}
}

func ExampleClient_Request() {
	url, stop := exampleServer(&server.Options{MaxPayload: 64 << 10})
	defer stop()

	nc, err := shim.Connect(url)
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
	}, shim.Conn(nc))); err != nil {
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
	url, stop := exampleServer(&server.Options{MaxPayload: 64 << 10, JetStream: true})
	defer stop()

	nc, err := shim.Connect(url)
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("reports.rendered")
	if err != nil {
		log.Fatal(err)
	}

	// 1 MiB on a 64 KiB server: refused before anything is written, as
	// nats.go refuses it; nothing is stored.
	report := make([]byte, 1<<20)
	err = shim.Publish(nc, "reports.rendered", report)
	fmt.Println(errors.Is(err, shim.ErrPayloadTooLarge), shim.Classify(err))

	// Claim checks only on purpose: a Store the service set up (once its
	// receivers resolve claim checks) stores the body and sends a reference.
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	store, err := claimcheck.New(context.Background(), js)
	if err != nil {
		log.Fatal(err)
	}
	if err := store.PublishMsg(context.Background(), &nats.Msg{Subject: "reports.rendered", Data: report}); err != nil {
		log.Fatal(err)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(m.Data), m.Header.Get(claimcheck.HeaderSize))

	// A receiver resolves it (claimcheck.Store.Subscribe does this for you).
	body, err := store.Resolve(context.Background(), m)
	fmt.Println(len(body), err)
	// Output:
	// true not run
	// 0 1048576
	// 1048576 <nil>
}

func ExampleConnect() {
	// A server-wide limit of 4096 bytes and an account with 512.
	dir, err := os.MkdirTemp("", "natssend-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	conf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(conf, []byte(`
max_payload: 4096
accounts: { TENANT: { users: [{user: tenant, password: pw}], limits: { max_payload: 512 } } }
`), 0o600); err != nil {
		log.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		log.Fatal(err)
	}
	url, stop := exampleServer(opts)
	defer stop()

	// The account's 512-byte limit is known when Connect returns; with
	// nats.Connect, MaxPayload would still say 4096 for a moment.
	nc, err := shim.Connect(url, nats.UserInfo("tenant", "pw"))
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	fmt.Println(nc.MaxPayload())
	// Output: 512
}

func ExampleAttempts() {
	url, stop := exampleServer(&server.Options{})
	defer stop()
	nc, err := shim.Connect(url)
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()

	// A responder that makes its effect conditional on the operation ID
	// (here a map under a lock stands in for a create-if-absent store).
	var mu sync.Mutex
	done := map[string]string{}
	if _, err := nc.Subscribe("orders.create", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
		id := shim.OperationIDFrom(ctx)
		if id == "" {
			return nil, shim.InvalidArgument("an operation ID is required")
		}
		mu.Lock()
		defer mu.Unlock()
		if r, ok := done[id]; ok {
			return []byte(r), nil // a repeat: the same answer
		}
		done[id] = "order " + string(req.Data) + " created"
		return []byte(done[id]), nil
	}, shim.Conn(nc))); err != nil {
		log.Fatal(err)
	}

	c := shim.NewClient(nc)
	for range 2 {
		reply, err := c.Request(context.Background(), "orders.create", []byte("o-1"),
			shim.OperationID("7f3c9a"), shim.Attempts(3))
		fmt.Println(string(reply.Data), err)
	}
	fmt.Println(len(done), "order")
	// Output:
	// order o-1 created <nil>
	// order o-1 created <nil>
	// 1 order
}

func ExampleRetry() {
	url, stop := exampleServer(&server.Options{})
	defer stop()
	nc, err := shim.Connect(url)
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	c := shim.NewClient(nc)

	// Nobody serves "inventory.reserve": each run certainly did not run, so
	// Retry runs it again, up to MaxAttempts.
	runs := 0
	err = shim.Retry(context.Background(), func(ctx context.Context) error {
		runs++
		_, err := c.Request(ctx, "inventory.reserve", []byte("sku-1"))
		return err
	}, shim.MaxAttempts(3), shim.Backoff(time.Millisecond, 10*time.Millisecond))
	fmt.Println(runs, shim.Classify(err), errors.Is(err, nats.ErrNoResponders))
	// Output:
	// 3 not run true
}

func ExampleWithClaimChecks() {
	url, stop := exampleServer(&server.Options{MaxPayload: 64 << 10, JetStream: true})
	defer stop()
	nc, err := shim.Connect(url)
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	// A bucket of its own with a short TTL: the backstop for payloads a
	// crash leaves behind.
	st, err := claimcheck.New(context.Background(), js, claimcheck.WithBucket("rpc_overflow"), claimcheck.WithTTL(10*time.Minute))
	if err != nil {
		log.Fatal(err)
	}

	// A responder that returns a 1 MiB dataset for a 256 KiB query.
	if _, err := nc.Subscribe("datasets.query", shim.Handler(func(_ context.Context, req *nats.Msg) ([]byte, error) {
		return make([]byte, 4*len(req.Data)), nil
	}, shim.ServeClaimChecks(st), shim.Conn(nc))); err != nil {
		log.Fatal(err)
	}

	c := shim.NewClient(nc, shim.WithClaimChecks(st), shim.WithTimeout(30*time.Second))
	reply, err := c.Request(context.Background(), "datasets.query", make([]byte, 256<<10))
	fmt.Println(len(reply.Data), claimcheck.IsClaimCheck(reply), err)
	// Output:
	// 1048576 false <nil>
}
