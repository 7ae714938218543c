package claimcheck_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

// exampleServer starts a nats-server in this process with a 64 KiB
// max_payload and JetStream in a temporary directory, and returns its URL
// and a function that stops it. A service connects to its deployment's
// URL instead.
func exampleServer() (url string, stop func()) {
	dir, err := os.MkdirTemp("", "claimcheck-example")
	if err != nil {
		log.Fatal(err)
	}
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, MaxPayload: 64 << 10,
		JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true,
	})
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

// exampleConnect connects with shim.Connect (no reconnect buffer, the account's
// limit known before the first send) and opens JetStream on it.
func exampleConnect(url string) (*nats.Conn, jetstream.JetStream) {
	nc, err := shim.Connect(url)
	if err != nil {
		log.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	return nc, js
}

// A payload above the broker's limit travels as a claim check; the
// receiving handler gets it back whole.
func ExampleStore_PublishMsg() {
	url, stop := exampleServer()
	defer stop()
	nc, js := exampleConnect(url)
	defer nc.Close()
	ctx := context.Background()

	store, err := claimcheck.New(ctx, js, claimcheck.WithStorage(jetstream.MemoryStorage))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	done := make(chan struct{})
	if _, err := store.Subscribe("reports", func(m *nats.Msg) {
		fmt.Println("received", len(m.Data), "bytes")
		close(done)
	}, func(m *nats.Msg, err error) {
		fmt.Println("unresolvable:", err)
	}); err != nil {
		log.Fatal(err)
	}

	report := make([]byte, 1<<20) // 1 MiB on a 64 KiB server
	if err := store.PublishMsg(ctx, &nats.Msg{Subject: "reports", Data: report}); err != nil {
		log.Fatal(err)
	}
	<-done
	// Output: received 1048576 bytes
}

// PublishJetStream counts the headers the options add and the stream's
// own max_msg_size; consumers resolve with Consume.
func ExampleStore_PublishJetStream() {
	url, stop := exampleServer()
	defer stop()
	nc, js := exampleConnect(url)
	defer nc.Close()
	ctx := context.Background()

	store, err := claimcheck.New(ctx, js, claimcheck.WithStorage(jetstream.MemoryStorage))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders"}, MaxMsgSize: 1024})
	if err != nil {
		log.Fatal(err)
	}

	ack, err := store.PublishJetStream(ctx, &nats.Msg{Subject: "orders", Data: make([]byte, 2048)}, jetstream.WithMsgID("order-1"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored as sequence", ack.Sequence)

	cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "billing", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		log.Fatal(err)
	}
	got := make(chan int)
	cc, err := store.Consume(cons, func(m jetstream.Msg) {
		_ = m.Ack()
		got <- len(m.Data())
	}, func(m jetstream.Msg, err error) { fmt.Println("unresolvable:", err) })
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Stop()
	fmt.Println("consumer got", <-got, "bytes")
	// Output:
	// stored as sequence 1
	// consumer got 2048 bytes
}

// Prepare is the building block for callers that send the message
// themselves: send the result through the shim, and Discard it when
// sending failed.
func ExampleStore_Prepare() {
	url, stop := exampleServer()
	defer stop()
	nc, js := exampleConnect(url)
	defer nc.Close()
	ctx := context.Background()
	store, err := claimcheck.New(ctx, js, claimcheck.WithStorage(jetstream.MemoryStorage))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	req := &nats.Msg{Subject: "convert", Data: make([]byte, 100<<10)}
	out, err := store.Prepare(ctx, req, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("claim check:", claimcheck.IsClaimCheck(out), "size header:", out.Header.Get(claimcheck.HeaderSize))
	if err := shim.PublishMsgContext(ctx, nc, out); err != nil {
		_ = store.Discard(ctx, out) // nobody can have it: delete the payload
		log.Fatal(err)
	}
	data, err := store.Resolve(ctx, out)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("resolved", len(data), "bytes")
	// Output:
	// claim check: true size header: 102400
	// resolved 102400 bytes
}
