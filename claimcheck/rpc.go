package claimcheck

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/claimops"
)

func init() {
	claimops.PrepareMsg = func(ctx context.Context, store any, m *nats.Msg, reserve int, limit int64, reply bool) (*nats.Msg, error) {
		s, ok := store.(*Store)
		if !ok || s == nil {
			return nil, notPublished(fmt.Errorf("%w: claimcheck: not a *Store", nats.ErrInvalidArg))
		}
		ref, err := s.prepare(ctx, m, reserve, limit, reply)
		if err != nil {
			return nil, notPublished(err)
		}
		return ref, nil
	}
	claimops.ReplyObjectName = replyObjectName
	claimops.ErrReplyStored = errReplyStored
	claimops.CanDelete = func(ctx context.Context, store any) error {
		s, ok := store.(*Store)
		if !ok || s == nil {
			return nil
		}
		return s.canDelete(ctx)
	}
	claimops.Domains = func(store any) []string {
		s, ok := store.(*Store)
		if !ok || s == nil {
			return nil
		}
		return slices.Sorted(maps.Keys(s.cfg.domains))
	}
}

// Conn returns the connection the Store publishes on (that of the
// JetStream context given to New).
func (s *Store) Conn() *nats.Conn { return s.nc }
