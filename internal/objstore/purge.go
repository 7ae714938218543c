package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrCleanupIncomplete is wrapped by the error of every claim-check
// clean-up that did not finish (package claimcheck: Store.Discard, a
// delete after a read, the removal of an upload that was not published):
// what it was to remove may stay stored until the bucket's TTL. Package
// shim tests for it with errors.Is to report such a clean-up.
var ErrCleanupIncomplete = errors.New("the clean-up did not finish (the bucket's TTL removes what is left)")

// purgeResponse is the stream leader's answer to a purge
// (server/jetstream_api.go JSApiStreamPurgeResponse).
type purgeResponse struct {
	Error   *jetstream.APIError `json:"error,omitempty"`
	Success bool                `json:"success"`
	Purged  uint64              `json:"purged"`
}

// Purge asks the stream's leader to remove every message on subject (no
// wildcards) and returns how many it removed: one request, through the
// Reader's API prefix (another domain's too), which clean-ups make one
// step at a time. ErrNoStream when the stream does not exist.
func (r *Reader) Purge(ctx context.Context, subject string) (uint64, error) {
	req, err := json.Marshal(struct {
		Filter string `json:"filter"`
	}{subject})
	if err != nil {
		return 0, err
	}
	r.sent()
	resp, err := r.nc.RequestWithContext(ctx, r.purge, req) //natssend:reviewed a purge of one subject: idempotent, repeated after a failure
	if err != nil {
		return 0, err
	}
	var ans purgeResponse
	if err := json.Unmarshal(resp.Data, &ans); err != nil {
		return 0, fmt.Errorf("objstore: malformed purge response: %w", err)
	}
	switch {
	case ans.Error != nil && ans.Error.ErrorCode == errCodeStreamNotFound:
		return 0, ErrNoStream
	case ans.Error != nil:
		return 0, ans.Error
	case !ans.Success:
		return 0, fmt.Errorf("objstore: the purge of %q did not succeed", subject)
	}
	return ans.Purged, nil
}
