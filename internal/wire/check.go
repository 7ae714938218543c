package wire

import (
	"fmt"

	"github.com/nats-io/nats.go"
)

// A CheckError is why a message cannot be sent as it is: Msg says what is
// wrong, Err is nats.go's error for it (nats.ErrBadSubject,
// nats.ErrBadHeaderMsg), which errors.Is sees.
type CheckError struct {
	Msg string
	Err error
}

func (e *CheckError) Error() string { return e.Err.Error() + ": " + e.Msg }
func (e *CheckError) Unwrap() error { return e.Err }

// CheckMsg is natssend's one input check of a message, made before
// anything is stored or sent (shim and claimcheck both use it): the
// subject, and the reply subject when set, are valid; the protocol line
// fits the server's max_control_line (see CheckControlLine); the header
// keys are valid. It returns nil or a *CheckError.
func CheckMsg(subject, reply string, h map[string][]string) error {
	if !ValidSubject(subject) {
		return &CheckError{fmt.Sprintf("invalid subject %q", subject), nats.ErrBadSubject}
	}
	if reply != "" && !ValidSubject(reply) {
		return &CheckError{fmt.Sprintf("invalid reply subject %q", reply), nats.ErrBadSubject}
	}
	if err := CheckControlLine(subject, len(reply)); err != nil {
		return err
	}
	if k, bad := InvalidHeaderKey(h); bad {
		return &CheckError{fmt.Sprintf("invalid header key %q", k), nats.ErrBadHeaderMsg}
	}
	return nil
}

// CheckControlLine refuses a subject that, with a reply subject of
// replyLen bytes, could make the message's protocol line longer than the
// server reads (MaxControlLine): the server would close the connection,
// failing everything else on it. It returns nil or a *CheckError.
func CheckControlLine(subject string, replyLen int) error {
	if ControlLineFits(subject, replyLen) {
		return nil
	}
	return &CheckError{fmt.Sprintf("subject of %d bytes too long (with %d bytes for the reply subject): the message's protocol line could exceed the server's max_control_line of %d bytes, which would close the connection",
		len(subject), replyLen, MaxControlLine), nats.ErrBadSubject}
}
