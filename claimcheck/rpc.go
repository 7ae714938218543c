package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/claimops"
)

func init() {
	claimops.Register(func(store any) claimops.Ops { s, _ := store.(*Store); return ops{s} })
}

// ops is a Store's claimops.Ops (see internal/claimops): what package
// shim uses of it beyond the public API.
type ops struct{ s *Store }

func (o ops) Prepare(ctx context.Context, m *nats.Msg, reserve int, limit int64, replyKey string) (*nats.Msg, error) {
	if o.s == nil {
		return nil, notPublished(fmt.Errorf("%w: claimcheck: not a *Store", nats.ErrInvalidArg))
	}
	ref, err := o.s.prepare(ctx, m, reserve, limit, replyKey)
	if err != nil {
		return nil, notPublished(err)
	}
	return ref, nil
}

func (o ops) ReplyStored(err error) bool { return errors.Is(err, errReplyStored) }

func (o ops) Domains() []string {
	if o.s == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(o.s.cfg.domains))
}

func (o ops) CanDelete(ctx context.Context) error {
	if o.s == nil {
		return nil
	}
	return o.s.canDelete(ctx)
}

// replyName is the object name of a claim-checked reply to the reply
// subject subject of a call whose reply key (the accept header's
// reply-key) is key: claimops.ReplyObjectName; "" (a random name) without
// a key.
func replyName(key, subject string) string { return claimops.ReplyObjectName(key, subject) }

// Conn returns the connection the Store publishes on (that of the
// JetStream context given to New).
func (s *Store) Conn() *nats.Conn { return s.nc }
