package shim_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/shim"
)

func ExampleClient_RequestStream() {
	url, stop := exampleServer(&server.Options{MaxPayload: 64 << 10})
	defer stop()
	nc, err := shim.Connect(url)
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()

	// A responder that exports rows as they are produced: far more than
	// max_payload in total, in frames sized to it, paced by the caller.
	export := shim.StreamHandler(func(ctx context.Context, req *nats.Msg, w *shim.StreamWriter) error {
		w.Header().Set("Content-Type", "text/csv")
		for i := range 20_000 {
			if _, err := fmt.Fprintf(w, "%d,row %d\n", i, i); err != nil {
				return err // the caller is gone; ctx is done too
			}
		}
		return nil
	}, shim.Conn(nc))
	if _, err := nc.Subscribe("datasets.export", export); err != nil {
		log.Fatal(err)
	}

	c := shim.NewClient(nc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // the whole export
	defer cancel()
	rs, err := c.RequestStream(ctx, "datasets.export", []byte("all"))
	if err != nil {
		log.Fatal(err) // no responders: shim.Classify(err) == shim.OutcomeNotRun
	}
	defer rs.Close()
	n, err := io.Copy(io.Discard, rs) // nil only after the end frame's digest matched
	fmt.Println(rs.Header().Get("Content-Type"), n, err)
	// Output:
	// text/csv 297780 <nil>
}

func ExampleClient_RequestMany() {
	url, stop := exampleServer(&server.Options{})
	defer stop()
	nc, err := shim.Connect(url)
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	for _, node := range []string{"n1", "n2", "n3"} {
		if _, err := nc.Subscribe("cluster.status", shim.Handler(func(ctx context.Context, req *nats.Msg) ([]byte, error) {
			return []byte(node + ": ok"), nil
		})); err != nil {
			log.Fatal(err)
		}
	}

	c := shim.NewClient(nc)
	var status []string
	for m, err := range c.RequestMany(context.Background(), "cluster.status", nil,
		shim.MaxReplies(3), shim.Timeout(2*time.Second)) {
		var e *shim.Error
		if errors.As(err, &e) && e.Remote {
			continue // one node's error reply; the others still count
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			break
		}
		status = append(status, string(m.Data))
	}
	sort.Strings(status)
	fmt.Println(status)
	// Output:
	// [n1: ok n2: ok n3: ok]
}
