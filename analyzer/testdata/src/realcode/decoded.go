package realcode // want package:"uses nats.go"

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
)

type joinReply struct{ Error string }

func decodeJoin(data []byte) (joinReply, error) {
	var r joinReply
	err := json.Unmarshal(data, &r)
	return r, err
}

// Joining a group: a timeout asks again, and so does an answer that
// decodes to a refusal. The reply is judged through what was decoded from
// it (and the decode's error, held in the send's own error variable), so
// the success paths that loop looked at the reply, and the timeout path
// sends again a join that may have run.
func joinGroup(nc *nats.Conn, req []byte) error { // want joinGroup:`sends via \(\*nats\.Conn\)\.Request`
	for i := 0; i < 5; i++ {
		r, err := nc.Request("group.join", req, time.Second) // want `call of \(\*nats\.Conn\)\.Request is retried on failure`
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		resp, err := decodeJoin(r.Data)
		if err != nil {
			continue
		}
		if resp.Error != "" {
			continue
		}
		return nil
	}
	return errors.New("not joined")
}

// The same with the reply decoded into a variable by address, its error
// in a variable of its own.
func joinGroupInto(nc *nats.Conn, req []byte) error { // want joinGroupInto:`sends via \(\*nats\.Conn\)\.Request`
	for i := 0; i < 5; i++ {
		r, err := nc.Request("group.join", req, time.Second) // want `call of \(\*nats\.Conn\)\.Request is retried on failure`
		if err != nil {
			continue
		}
		var resp joinReply
		if derr := json.Unmarshal(r.Data, &resp); derr != nil || resp.Error != "" {
			continue
		}
		return nil
	}
	return errors.New("not joined")
}

// Near miss: every answer is decoded and handed on, and the loop asks
// again on a timer whatever happened: decoding is not a condition on the
// reply, so this stays a periodic request.
func followGroup(nc *nats.Conn, req []byte, handle func(joinReply), stop <-chan struct{}) { // want followGroup:`sends via \(\*nats\.Conn\)\.Request`
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		r, err := nc.Request("group.status", req, time.Second)
		if err != nil {
			continue
		}
		resp, _ := decodeJoin(r.Data)
		handle(resp)
	}
}
