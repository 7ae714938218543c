package claimcheck_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
)

// exampleServer starts an in-process server with a 64 KiB max_payload and
// JetStream, as the examples' broker.
func exampleServer() (url string, stop func()) {
	dir, err := os.MkdirTemp("", "claimcheck-example")
	if err != nil {
		panic(err)
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, MaxPayload: 64 << 10, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		panic(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		panic("server not ready")
	}
	return srv.ClientURL(), func() { srv.Shutdown(); srv.WaitForShutdown(); os.RemoveAll(dir) }
}

// A payload above the broker's limit travels as a claim check; the
// receiving handler gets it back whole.
func ExampleStore_PublishMsg() {
	url, stop := exampleServer()
	defer stop()
	nc, _ := nats.Connect(url)
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()

	store, err := claimcheck.New(ctx, js, claimcheck.WithStorage(jetstream.MemoryStorage))
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan struct{})
	_, _ = store.Subscribe("reports", func(m *nats.Msg) {
		fmt.Println("received", len(m.Data), "bytes")
		close(done)
	}, func(m *nats.Msg, err error) {
		fmt.Println("unresolvable:", err)
	})

	report := make([]byte, 1<<20) // 1 MiB on a 64 KiB server
	if err := store.PublishMsg(ctx, &nats.Msg{Subject: "reports", Data: report}); err != nil {
		fmt.Println(err)
		return
	}
	<-done
	// Output: received 1048576 bytes
}

// PublishJetStream counts the headers the options add and the stream's
// own max_msg_size; consumers resolve with Consume.
func ExampleStore_PublishJetStream() {
	url, stop := exampleServer()
	defer stop()
	nc, _ := nats.Connect(url)
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()

	store, _ := claimcheck.New(ctx, js, claimcheck.WithStorage(jetstream.MemoryStorage))
	stream, _ := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders"}, MaxMsgSize: 1024})

	ack, err := store.PublishJetStream(ctx, &nats.Msg{Subject: "orders", Data: make([]byte, 2048)}, jetstream.WithMsgID("order-1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("stored as sequence", ack.Sequence)

	cons, _ := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "billing", AckPolicy: jetstream.AckExplicitPolicy})
	got := make(chan int)
	cc, _ := store.Consume(cons, func(m jetstream.Msg) {
		_ = m.Ack()
		got <- len(m.Data())
	}, func(m jetstream.Msg, err error) { fmt.Println("unresolvable:", err) })
	defer cc.Stop()
	fmt.Println("consumer got", <-got, "bytes")
	// Output:
	// stored as sequence 1
	// consumer got 2048 bytes
}

// Prepare is the building block for callers that send the message
// themselves: send the result, and Discard it when sending failed.
func ExampleStore_Prepare() {
	url, stop := exampleServer()
	defer stop()
	nc, _ := nats.Connect(url)
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	store, _ := claimcheck.New(ctx, js, claimcheck.WithStorage(jetstream.MemoryStorage))

	req := &nats.Msg{Subject: "convert", Data: make([]byte, 100<<10)}
	out, err := store.Prepare(ctx, req, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("claim check:", claimcheck.IsClaimCheck(out), "size header:", out.Header.Get(claimcheck.HeaderSize))
	if err := nc.PublishMsg(out); err != nil {
		_ = store.Discard(ctx, out) // nobody can have it: delete the payload
	}
	data, _ := store.Resolve(ctx, out)
	fmt.Println("resolved", len(data), "bytes")
	// Output:
	// claim check: true size header: 102400
	// resolved 102400 bytes
}
