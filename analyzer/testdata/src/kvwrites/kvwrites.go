package kvwrites // want package:"uses nats.go"

// JetStream KeyValue writes, as a service registry and a
// configuration store write them. Every write is a raw send (it is refused
// above max_payload, and no claim check can stand in for a value); a Put
// retried after a failure may write a second revision of what the first
// stored. Create and Update, whose repeat the bucket refuses, are not
// retries.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

type service struct {
	ID    string
	Addrs []string
}

type registry struct {
	kv  jetstream.KeyValue
	old nats.KeyValue
}

// register writes the service's record, retrying a failed write: reported.
func (r *registry) register(ctx context.Context, svc service) error { // want register:`sends via \(jetstream.KeyValue\).Put`
	data, err := json.Marshal(svc)
	if err != nil {
		return err
	}
	for attempt := 0; attempt < 3; attempt++ {
		if _, err = r.kv.Put(ctx, "svc."+svc.ID, data); err == nil { // want `raw \(jetstream.KeyValue\).Put is refused above max_payload and no claim check can stand in for a value` `call of \(jetstream.KeyValue\).Put is retried on failure: it may be stored, and a Put again writes another revision; use Create, or Update with the revision read`
			return nil
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	return err
}

// heartbeat rewrites the record on a timer, whatever the last write did:
// periodic, only the raw send is reported.
func (r *registry) heartbeat(ctx context.Context, svc service) { // want heartbeat:`sends via \(jetstream.KeyValue\).Put`
	data, _ := json.Marshal(svc)
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		r.kv.Put(ctx, "svc."+svc.ID, data) // want `raw \(jetstream.KeyValue\).Put is refused above max_payload`
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// setLegacy writes a setting with the legacy API, again on error: reported.
func (r *registry) setLegacy(key, value string) error { // want setLegacy:`sends via \(nats.KeyValue\).PutString`
	var err error
	for i := 0; i < 5; i++ {
		if _, err = r.old.PutString(key, value); err == nil { // want `raw \(nats.KeyValue\).PutString is refused above max_payload` `call of \(nats.KeyValue\).PutString is retried on failure: it may be stored`
			break
		}
	}
	return err
}

// claim takes a lock by creating its key, waiting while another holds it:
// a repeat of a stored Create is refused (ErrKeyExists), so it never
// writes twice. Only the raw send is reported.
func (r *registry) claim(ctx context.Context, name, owner string) error {
	for {
		_, err := r.kv.Create(ctx, "lock."+name, []byte(owner)) // want `raw \(jetstream.KeyValue\).Create is refused above max_payload`
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// addAddr is an optimistic update: read, change, Update with the revision
// read, again on a conflict. Only the raw send is reported.
func (r *registry) addAddr(ctx context.Context, id, addr string) error {
	for {
		e, err := r.kv.Get(ctx, "svc."+id)
		if err != nil {
			return err
		}
		var svc service
		if err := json.Unmarshal(e.Value(), &svc); err != nil {
			return err
		}
		svc.Addrs = append(svc.Addrs, addr)
		data, _ := json.Marshal(svc)
		if _, err := r.kv.Update(ctx, "svc."+id, data, e.Revision()); err == nil { // want `raw \(jetstream.KeyValue\).Update is refused above max_payload`
			return nil
		}
	}
}

// bump retries an Update with the same revision: the bucket refuses the
// repeat of one that was stored. Only the raw send is reported.
func (r *registry) bump(key string, value []byte, rev uint64) error {
	var err error
	for i := 0; i < 3; i++ {
		if _, err = r.old.Update(key, value, rev); err == nil { // want `raw \(nats.KeyValue\).Update is refused above max_payload`
			return nil
		}
	}
	return err
}

// save wraps a Put; its caller's retry is reported at the call.
func (r *registry) save(ctx context.Context, key string, v []byte) error { // want save:`sends via \(jetstream.KeyValue\).Put`
	_, err := r.kv.Put(ctx, key, v) // want `raw \(jetstream.KeyValue\).Put is refused above max_payload`
	return err
}

func (r *registry) saveAll(ctx context.Context, key string, v []byte) error { // want saveAll:`sends via \(jetstream.KeyValue\).Put`
	var err error
	for i := 0; i < 3; i++ {
		if err = r.save(ctx, key, v); err == nil { // want `call of \(\*registry\).save \(via \(jetstream.KeyValue\).Put\) is retried on failure: it may be stored, and a Put again writes another revision`
			return nil
		}
	}
	return err
}
