package claimcheck

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/internal/claimops"
)

func init() {
	claimops.PrepareMsg = func(ctx context.Context, store any, m *nats.Msg, reserve int, limit int64, replyKey string) (*nats.Msg, error) {
		s, ok := store.(*Store)
		if !ok || s == nil {
			return nil, notPublished(fmt.Errorf("%w: claimcheck: not a *Store", nats.ErrInvalidArg))
		}
		ref, err := s.prepare(ctx, m, reserve, limit, replyKey)
		if err != nil {
			return nil, notPublished(err)
		}
		return ref, nil
	}
	claimops.ReplyObjectName = replyName
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

// replyName is the object name of a claim-checked reply to the reply
// subject subject of a call whose reply key (the accept header's
// reply-key) is key: derived from both, so that the caller, who made the
// key, can delete the payload even if the reference never reaches it,
// while nobody who did not receive the request can predict the name.
// docs/protocol.md specifies it. The name of a reply without a key is
// random (nameFor("")).
func replyName(key, subject string) string {
	if key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("natssend reply\x00" + key + "\x00" + subject))
	return nameEncoding.EncodeToString(sum[:16])
}

// Conn returns the connection the Store publishes on (that of the
// JetStream context given to New).
func (s *Store) Conn() *nats.Conn { return s.nc }
