// Package msgids holds JetStream publishes retried with a message ID fixed // want package:"uses nats.go"
// outside the loop, set in each way real code sets it, beside IDs that
// change per attempt.
package msgids

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var errGaveUp = errors.New("gave up")

// Header.Set on the message before the loop.
func headerSet(ctx context.Context, js jetstream.JetStream, orderID string, body []byte) error { // want headerSet:`sends via \(jetstream\.Publisher\)\.PublishMsg`
	m := nats.NewMsg("orders.created")
	m.Data = body
	m.Header.Set(nats.MsgIdHdr, "order-"+orderID)
	for i := 0; i < 3; i++ {
		if _, err := js.PublishMsg(ctx, m); err == nil {
			return nil
		}
	}
	return errGaveUp
}

// A header map built first and put in the literal.
func headerMapInLiteral(ctx context.Context, js jetstream.JetStream, orderID string, body []byte) error { // want headerMapInLiteral:`sends via \(jetstream\.Publisher\)\.PublishMsg`
	hdr := nats.Header{}
	hdr.Set("Nats-Msg-Id", orderID)
	hdr.Set("Content-Type", "application/json")
	m := &nats.Msg{Subject: "orders.created", Data: body, Header: hdr}
	for i := 0; i < 3; i++ {
		if _, err := js.PublishMsg(ctx, m); err == nil {
			return nil
		}
	}
	return errGaveUp
}

// A header literal assigned to the message's Header.
func headerAssigned(ctx context.Context, js jetstream.JetStream, orderID string, body []byte) error { // want headerAssigned:`sends via \(jetstream\.Publisher\)\.PublishMsg`
	m := nats.NewMsg("orders.created")
	m.Data = body
	m.Header = nats.Header{nats.MsgIdHdr: []string{orderID}}
	for i := 0; i < 3; i++ {
		if _, err := js.PublishMsg(ctx, m); err == nil {
			return nil
		}
	}
	return errGaveUp
}

// Indexing the header.
func headerIndexed(ctx context.Context, js jetstream.JetStream, orderID string, body []byte) error { // want headerIndexed:`sends via \(jetstream\.Publisher\)\.PublishMsg`
	m := nats.NewMsg("orders.created")
	m.Data = body
	m.Header[nats.MsgIdHdr] = []string{orderID}
	for i := 0; i < 3; i++ {
		if _, err := js.PublishMsg(ctx, m); err == nil {
			return nil
		}
	}
	return errGaveUp
}

// WithMsgID inside an options slice passed with opts....
func optionsSlice(ctx context.Context, js jetstream.JetStream, orderID string, body []byte) error { // want optionsSlice:`sends via \(jetstream\.Publisher\)\.Publish`
	opts := []jetstream.PublishOpt{jetstream.WithMsgID(orderID)}
	opts = append(opts, jetstream.WithExpectLastSequence(0))
	for i := 0; i < 3; i++ {
		if _, err := js.Publish(ctx, "orders.created", body, opts...); err == nil {
			return nil
		}
	}
	return errGaveUp
}

// An options slice built with append.
func optionsAppended(ctx context.Context, js jetstream.JetStream, orderID string, body []byte) error { // want optionsAppended:`sends via \(jetstream\.Publisher\)\.Publish`
	var opts []jetstream.PublishOpt
	opts = append(opts, jetstream.WithMsgID(orderID))
	for i := 0; i < 3; i++ {
		if _, err := js.Publish(ctx, "orders.created", body, opts...); err == nil {
			return nil
		}
	}
	return errGaveUp
}

// Near miss: the options slice carries no message ID.
func optionsWithoutID(ctx context.Context, js jetstream.JetStream, body []byte) error { // want optionsWithoutID:`sends via \(jetstream\.Publisher\)\.Publish`
	opts := []jetstream.PublishOpt{jetstream.WithExpectLastSequence(0)}
	for i := 0; i < 3; i++ {
		if _, err := js.Publish(ctx, "orders.created", body, opts...); err == nil { // want `call of \(jetstream.Publisher\).Publish is retried on failure`
			return nil
		}
	}
	return errGaveUp
}

// The ID is a hash of the payload, hex-encoded.
func contentHash(ctx context.Context, js jetstream.JetStream, body []byte) error { // want contentHash:`sends via \(jetstream\.Publisher\)\.Publish`
	sum := sha256.Sum256(body)
	id := hex.EncodeToString(sum[:])
	for i := 0; i < 3; i++ {
		if _, err := js.Publish(ctx, "blobs", body, jetstream.WithMsgID(id)); err == nil {
			return nil
		}
	}
	return errGaveUp
}

// The hash computed inside the loop is the same on every attempt too.
func contentHashInLoop(ctx context.Context, js jetstream.JetStream, body []byte) error { // want contentHashInLoop:`sends via \(jetstream\.Publisher\)\.Publish`
	for i := 0; i < 3; i++ {
		sum := sha256.Sum256(body)
		id := base64.RawURLEncoding.EncodeToString(sum[:16])
		if _, err := js.Publish(ctx, "blobs", body, jetstream.WithMsgID(id)); err == nil {
			return nil
		}
	}
	return errGaveUp
}

// Near miss: a fresh ID per attempt.
func freshID(ctx context.Context, js jetstream.JetStream, body []byte, newID func() string) error { // want freshID:`sends via \(jetstream\.Publisher\)\.PublishMsg`
	for i := 0; i < 3; i++ {
		m := &nats.Msg{Subject: "orders.created", Data: body, Header: nats.Header{}}
		m.Header.Set(nats.MsgIdHdr, newID())
		if _, err := js.PublishMsg(ctx, m); err == nil { // want `call of \(jetstream.Publisher\).PublishMsg is retried on failure`
			return nil
		}
		time.Sleep(time.Second)
	}
	return errGaveUp
}

// Near miss: the ID carries the attempt number.
func attemptInID(ctx context.Context, js jetstream.JetStream, orderID string, body []byte) error { // want attemptInID:`sends via \(jetstream\.Publisher\)\.Publish`
	for attempt := 0; attempt < 3; attempt++ {
		id := orderID + "-" + string(rune('0'+attempt))
		if _, err := js.Publish(ctx, "orders.created", body, jetstream.WithMsgID(id)); err == nil { // want `call of \(jetstream.Publisher\).Publish is retried on failure`
			return nil
		}
	}
	return errGaveUp
}

const dedupHeader = "Nats-Msg-Id"

type spooled struct {
	ID    string
	Body  []byte
	Tries int
}

// toMsg builds the message of a spooled entry; its ID was fixed when the
// entry was spooled.
func (e *spooled) toMsg(subject string) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = e.Body
	m.Header.Add(dedupHeader, e.ID)
	m.Header.Add("X-Attempt", "1")
	return m
}

// toMsgNoID builds the message without an ID.
func (e *spooled) toMsgNoID(subject string) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = e.Body
	return m
}

// The message is built once, before the loop, by a method that sets its
// ID: the same ID on every attempt.
func resendSpooled(ctx context.Context, js jetstream.JetStream, e *spooled) error { // want resendSpooled:`sends via \(jetstream\.Publisher\)\.PublishMsg`
	msg := e.toMsg("audit.in")
	for try := 0; try < 5; try++ {
		if _, err := js.PublishMsg(ctx, msg); err == nil {
			return nil
		}
		e.Tries++
		time.Sleep(time.Duration(try) * 50 * time.Millisecond)
	}
	return errGaveUp
}

// Near miss: the builder sets no ID.
func resendSpooledNoID(ctx context.Context, js jetstream.JetStream, e *spooled) error { // want resendSpooledNoID:`sends via \(jetstream\.Publisher\)\.PublishMsg`
	msg := e.toMsgNoID("audit.in")
	for try := 0; try < 5; try++ {
		if _, err := js.PublishMsg(ctx, msg); err == nil { // want `call of \(jetstream.Publisher\).PublishMsg is retried on failure`
			return nil
		}
	}
	return errGaveUp
}

// stampedMsg builds a message with a new ID each time.
func stampedMsg(subject string, body []byte) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = body
	m.Header.Set(dedupHeader, time.Now().Format(time.RFC3339Nano))
	return m
}

// Near miss: the same body built again on every attempt, with a new ID
// each time.
func resendStamped(ctx context.Context, js jetstream.JetStream, body []byte) error { // want resendStamped:`sends via \(jetstream\.Publisher\)\.PublishMsg`
	for try := 0; try < 5; try++ {
		msg := stampedMsg("audit.in", body)
		if _, err := js.PublishMsg(ctx, msg); err == nil { // want `call of \(jetstream.Publisher\).PublishMsg is retried on failure`
			return nil
		}
	}
	return errGaveUp
}
