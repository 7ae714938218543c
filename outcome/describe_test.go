package outcome_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/natssend/natssend/outcome"
)

// coder is an error of a natssend package that says its code and kind.
type coder struct {
	code string
	k    outcome.Kind
	err  error
}

func (c *coder) Error() string                       { return "coder" }
func (c *coder) Unwrap() error                       { return c.err }
func (c *coder) OutcomeCode() (string, outcome.Kind) { return c.code, c.k }

// TestDescribe: an *Error is itself; a Coder's kind is the outermost's and
// its code the first one said, else the cause's; anything else is Unknown
// with the table's code; nil is nil.
func TestDescribe(t *testing.T) {
	own := outcome.NotRunError(outcome.CodeUnavailable, "x", nil)
	for _, tc := range []struct {
		name string
		err  error
		code string
		k    outcome.Kind
	}{
		{"an *Error, wrapped", fmt.Errorf("ctx: %w", own), outcome.CodeUnavailable, outcome.NotRun},
		{"a Coder with a code", &coder{outcome.CodeNotFound, outcome.NotRun, nats.ErrTimeout}, outcome.CodeNotFound, outcome.NotRun},
		{"a Coder without a code: the cause's", &coder{"", outcome.NotRun, nats.ErrTimeout}, outcome.CodeDeadlineExceeded, outcome.NotRun},
		{"an outer Coder without a code, an inner one with", &coder{"", outcome.NotRun, &coder{outcome.CodeDataLoss, outcome.Unknown, nil}}, outcome.CodeDataLoss, outcome.NotRun},
		{"a Coder in a joined error", errors.Join(nats.ErrTimeout, &coder{outcome.CodeNotFound, outcome.NotRun, nil}), outcome.CodeNotFound, outcome.NotRun},
		{"nats.go's", nats.ErrConnectionClosed, outcome.CodeUnavailable, outcome.Unknown},
		{"anything else", errors.New("boom"), outcome.CodeInternal, outcome.Unknown},
		{"a typed nil *Error", (*outcome.Error)(nil), outcome.CodeInternal, outcome.Unknown},
		{"a struct literal", &outcome.Error{Code: "X"}, "X", outcome.Unknown},
	} {
		d := outcome.Describe(tc.err)
		if d.Code != tc.code || d.Outcome() != tc.k {
			t.Errorf("%s: Describe = %s, %s; want %s, %s", tc.name, d.Code, d.Outcome(), tc.code, tc.k)
		}
	}
	if outcome.Describe(nil) != nil || outcome.Classify(nil) != outcome.OK || !outcome.MayHaveRun(nil) {
		t.Error("nil: want nil, OK, MayHaveRun true")
	}
	if outcome.MayHaveRun(own) || outcome.MayHaveRun(outcome.Reject("BUSY", "")) || !outcome.MayHaveRun(errors.New("x")) {
		t.Error("MayHaveRun: want false for NotRun and Rejected, true for an unknown error")
	}
}

// TestWithCause: a copy with the new cause; the original keeps its own.
func TestWithCause(t *testing.T) {
	e := outcome.MayHaveRunError(outcome.CodeInternal, "x", nats.ErrTimeout)
	c := e.WithCause(nats.ErrConnectionClosed)
	if !errors.Is(c, nats.ErrConnectionClosed) || errors.Is(c, nats.ErrTimeout) || !errors.Is(e, nats.ErrTimeout) || c.Outcome() != outcome.Unknown || !c.Sent {
		t.Errorf("WithCause: %v (%s), original %v", c, c.Outcome(), e)
	}
}
