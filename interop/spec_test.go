package interop_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/natssend/natssend/claimcheck"
	"github.com/natssend/natssend/shim"
)

// TestSpecNamesTheWire: docs/protocol.md states its version and names
// every header, code and bound the Go code puts on the wire, so that a
// change to the wire cannot land without the spec (the versioning rule).
// It needs no Node.js and runs with go test ./....
func TestSpecNamesTheWire(t *testing.T) {
	b, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	spec := string(b)
	if !regexp.MustCompile(`(?m)^\*\*Version [0-9]+\*\*`).MatchString(spec) {
		t.Error("the spec does not state its version")
	}
	for _, name := range []string{
		claimcheck.HeaderRef, claimcheck.HeaderSize, claimcheck.HeaderBucket, claimcheck.HeaderDomain,
		claimcheck.DefaultBucket, "claim-check-subject", "natssend-hh256",
		shim.HeaderErrorCode, shim.HeaderError, shim.HeaderTimeout, shim.HeaderOutcome, shim.HeaderOperationID,
		shim.HeaderAcceptClaimCheck, shim.HeaderMaxPayload, shim.HeaderStream,
		shim.CodePayloadTooLarge, shim.CodeInvalidArgument, shim.CodeInternal, shim.CodeDeadlineExceeded,
		shim.CodeCanceled, shim.CodeNoResponders, shim.CodeUnavailable, shim.CodeNotFound, shim.CodeDataLoss,
		shim.CodePermissionDenied, shim.CodeReplyLost, shim.CodeClaimCheckUnresolved, shim.CodeStreamBroken,
	} {
		if !strings.Contains(spec, "`"+name) {
			t.Errorf("the spec does not name %q", name)
		}
	}
	for what, text := range map[string]string{
		"MaxStreamWindow":     "1 GiB",
		"MaxStreamIdle":       thousands(shim.MaxStreamIdle.Milliseconds()),
		"InitialStreamWindow": strconv.Itoa(shim.InitialStreamWindow>>20) + " MiB",
		"DefaultStreamWindow": strconv.Itoa(shim.DefaultStreamWindow>>20) + " MiB",
		"MaxSize":             strconv.Itoa(claimcheck.MaxSize>>20) + " MiB",
		"MaxOperationIDLen":   "1–" + strconv.Itoa(shim.MaxOperationIDLen),
	} {
		if !strings.Contains(spec, text) {
			t.Errorf("the spec does not give %s as %q", what, text)
		}
	}
	if shim.MaxStreamWindow != 1<<30 {
		t.Errorf("MaxStreamWindow is %d: update the spec (6.1) and this test", shim.MaxStreamWindow)
	}
}

// thousands writes n with a comma every three digits, as the spec does.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
