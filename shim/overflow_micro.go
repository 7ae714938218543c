package shim

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/internal/callerr"
	"github.com/natssend/natssend/outcome"
)

// ResolveMicro is ServeClaimChecks for a micro endpoint: it returns the
// request's body, read from st when the request is a claim check, within
// the earlier of ctx's deadline and the caller's (HeaderTimeout). Subject
// binding applies. When the request cannot be resolved it answers it with
// a rejection (CodeClaimCheckUnresolved, the handler did not run) and
// returns that error: the endpoint must then return without doing
// anything. Like a Handler, it never deletes the request payload.
//
//	func(req micro.Request) {
//		body, err := shim.ResolveMicro(ctx, st, req)
//		if err != nil {
//			return // already answered
//		}
//		result := work(body)
//		_ = shim.RespondMicroClaimCheck(ctx, st, req, result, nil)
//	}
func ResolveMicro(ctx context.Context, st *claimcheck.Store, req micro.Request) ([]byte, error) {
	if req == nil {
		return nil, notSent(CodeInvalidArgument, "nil request", nats.ErrInvalidMsg)
	}
	m := &nats.Msg{Subject: req.Subject(), Header: nats.Header(req.Headers()), Data: req.Data()}
	if !claimcheck.IsClaimCheck(m) {
		return m.Data, nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	var err error
	var data []byte
	if st == nil {
		err = errors.New("this responder does not serve claim-checked requests (nil Store)")
	} else {
		rctx, cancel := requestContext(ctx, m)
		data, err = st.Resolve(rctx, m)
		cancel()
		if b := m.Header.Get(HeaderAcceptClaimCheck); err != nil && b != "" && b != st.Bucket() && m.Header.Get(claimcheck.HeaderBucket) == "" {
			err = fmt.Errorf("the request was stored in bucket %q, this responder's store reads %q: %w", b, st.Bucket(), err)
		}
	}
	if err == nil {
		return data, nil
	}
	rerr := outcome.New(CodeClaimCheckUnresolved, "the claim-checked request could not be resolved; the handler did not run: "+err.Error(), OutcomeRejected, err)
	if req.Reply() != "" {
		if serr := req.Error(CodeClaimCheckUnresolved, callerr.Truncate(rerr.Message, maxErrorMessage), nil,
			micro.WithHeaders(micro.Headers{HeaderOutcome: {outcomeRejected}})); serr != nil {
			rerr = rerr.WithCause(fmt.Errorf("%w; %w", err, fmt.Errorf("error reply not sent either: %w", serr)))
		}
	}
	return nil, rerr
}

// RespondMicroClaimCheck is RespondMicro with RPC overflow: a reply over
// the limit goes as a claim check stored in st when the request accepts
// them (HeaderAcceptClaimCheck naming st's bucket, as a Client made with
// WithClaimChecks sends); otherwise, and for a reply above st's maximum
// object size, it is answered like RespondMicro (PAYLOAD_TOO_LARGE). The
// upload has the caller's deadline (the earlier of ctx's and
// HeaderTimeout's). st should be a Store on the service's connection: its
// limit is the one that decides. The caller deletes the reply payload
// after reading it.
func RespondMicroClaimCheck(ctx context.Context, st *claimcheck.Store, req micro.Request, data []byte, h nats.Header) error {
	if req == nil {
		return notSent(CodeInvalidArgument, "nil request; not sent", nats.ErrInvalidMsg)
	}
	if st == nil {
		return notSent(CodeInvalidArgument, "nil Store; not sent", ErrInvalidOption)
	}
	hdr := nats.Header(req.Headers())
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := requestContext(ctx, &nats.Msg{Header: hdr})
	defer cancel()
	return replyClaimCheck(ctx, st, callerAccept(hdr), req.Reply(), data, h, replyPeer{
		plain:      func() error { return RespondMicro(req, data, h) },
		errorReply: func(code, msg string) error { return RespondMicroError(req, code, msg) },
		sendRef: func(ref *nats.Msg) error {
			return microMaxPayload(req.Respond(nil, micro.WithHeaders(micro.Headers(ref.Header))))
		},
	})
}
