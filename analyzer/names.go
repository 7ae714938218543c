package analyzer

// This file, sendnames.go (the send catalogue) and receivenames.go (the
// receive paths) hold every external
// name the analyzer matches by string: the sends, the errors that prove
// nothing was delivered, the retry helpers and their semantics, pure
// functions and functions that do not return. The tables are read-only after package initialization. A name is
// a funcKey ("pkgpath.Func", "pkgpath.Type.Method") or, for variables and
// constants, "pkgpath.Name". TestNamesExist checks those of nats.go, shim
// and claimcheck against the real packages.

// Package paths matched by the analyzer. The analyzer never imports these
// packages: it compares the package path, receiver type name and method name
// of each resolved *types.Func.
const (
	natsPath       = "github.com/nats-io/nats.go"
	jetstreamPath  = natsPath + "/jetstream"
	microPath      = natsPath + "/micro"
	shimPath       = "github.com/natssend/natssend/shim"
	claimcheckPath = "github.com/natssend/natssend/claimcheck"
)

// notDeliveredErrors are the error variables that prove a send had no
// effect: nobody listening (no responders), refused before sending, or
// nothing published.
var notDeliveredErrors = map[string]bool{
	natsPath + ".ErrNoResponders":                     true,
	natsPath + ".ErrMaxPayload":                       true,
	jetstreamPath + ".ErrNoStreamResponse":            true,
	natsPath + ".ErrTooManyStalledMsgs":               true, // async publish refused locally
	jetstreamPath + ".ErrTooManyStalledMsgs":          true,
	jetstreamPath + ".ErrStreamMessageExceedsMaximum": true,
	shimPath + ".ErrPayloadTooLarge":                  true,
	claimcheckPath + ".ErrTooLarge":                   true,
	claimcheckPath + ".ErrNotPublished":               true,
	claimcheckPath + ".ErrClosed":                     true,
}

// Errors judged per call: they prove nothing was written only for the
// sends listed with them. nats.go v1.55.0, nats.go:4738-4741: publish, the
// one writer of Publish, PublishMsg and PublishRequest, and of
// (*EncodedConn).Publish and PublishRequest after encoding (enc.go:105-124),
// returns ErrConnectionClosed when the connection is closed, before
// anything goes into the outgoing buffer. A request's ErrConnectionClosed
// proves nothing: newRequest (nats.go:4961-4964) also returns it after the
// request went out, when the connection closed while it waited for the
// reply.
var notWrittenErrors = map[string]map[string]bool{
	natsPath + ".ErrConnectionClosed": setOf(natsPath+".Conn.Publish", natsPath+".Conn.PublishMsg", natsPath+".Conn.PublishRequest",
		natsPath+".EncodedConn.Publish", natsPath+".EncodedConn.PublishRequest"),
}

// refusedCodes are the JetStream API error codes (jetstream.APIError and
// nats.APIError ErrorCode) by which a stream refused a published message,
// so nothing was stored (nats-server errors.json): a failed expectation,
// the stream's limits or store, a message over max_msg_size, a bad TTL.
var refusedCodes = map[int64]bool{
	10002: true, // JSAccountResourcesExceededErr
	10023: true, // JSInsufficientResourcesErr
	10028: true, // JSMemoryResourcesExceededErr
	10047: true, // JSStorageResourcesExceededErr
	10053: true, // JSStreamLimitsErrF
	10054: true, // JSStreamMessageExceedsMaximumErr
	10060: true, // JSStreamNotMatchErr (expected stream)
	10070: true, // JSStreamWrongLastMsgIDErrF
	10071: true, // JSStreamWrongLastSequenceErrF
	10077: true, // JSStreamStoreFailedF
	10164: true, // JSStreamWrongLastSequenceConstantErr
	10165: true, // JSMessageTTLInvalidErr
	10166: true, // JSMessageTTLDisabledErr
}

// apiErrorTypes are the JetStream API error types whose ErrorCode field
// refusedCodes is compared with.
var apiErrorTypes = [][2]string{{jetstreamPath, "APIError"}, {natsPath, "APIError"}}

// shimOutcomes are shim.Outcome constants and what Classify(err) == them
// says about the send; shimClassify and shimMayHaveRun are the functions.
var shimOutcomes = map[string]label{
	"OutcomeOK":       labelSuccess,
	"OutcomeNotRun":   labelSafe,
	"OutcomeRejected": labelSafe,
	"OutcomeUnknown":  labelFailure,
}

// targetTypes name where a send goes (a parameter of these types is not
// part of what is sent).
var targetTypes = [][2]string{
	{natsPath, "Conn"}, {natsPath, "EncodedConn"}, {natsPath, "JetStreamContext"}, {natsPath, "JetStream"},
	{jetstreamPath, "JetStream"}, {jetstreamPath, "Publisher"},
	{shimPath, "Client"}, {claimcheckPath, "Store"},
}

// receiveFuncs wait for a message: a send followed by one of them whose
// result is tested (publish, NextMsg times out, publish again) is judged
// by whether the message arrived.
var receiveFuncs = setOf(
	natsPath+".Subscription.NextMsg", natsPath+".Subscription.NextMsgWithContext",
	jetstreamPath+".Consumer.Next", jetstreamPath+".MessagesContext.Next",
)

// flushFuncs wait for the server to have processed what was written: a
// failed flush after a publish leaves the publish's outcome unknown, so
// the retry check reads it as it reads a receive after a send (judgeFuncs).
var (
	flushFuncs = setOf(natsPath+".Conn.Flush", natsPath+".Conn.FlushTimeout", natsPath+".Conn.FlushWithContext")
	judgeFuncs = union(receiveFuncs, flushFuncs)
)

// A hand-rolled request (publishRequests) is told to use
// (*shim.Client).Request only when it asks one reply on a fresh inbox
// (inboxFuncs); one that gathers several (AutoUnsubscribe(n), NextMsg in a
// loop) or uses a long-lived reply subject is told gatherAdvice.
var (
	publishRequests = setOf(natsPath+".Conn.PublishRequest", natsPath+".EncodedConn.PublishRequest")
	inboxFuncs      = setOf(natsPath+".NewInbox", natsPath+".Conn.NewInbox", natsPath+".Conn.NewRespInbox")
	autoUnsubscribe = natsPath + ".Subscription.AutoUnsubscribe"
)

const gatherAdvice = "use (*shim.Client).RequestMany, or //natssend:reviewed <reason>"

// reschedulers run their last argument later: a function that passes
// itself to one on failure retries.
var reschedulers = setOf("time.AfterFunc")

// sendingTypes are the NATS values whose methods include raw sends: one
// flowing into an interface of the user's own is reported (flows.go).
var sendingTypes = [][2]string{
	{natsPath, "Conn"}, {natsPath, "EncodedConn"}, {natsPath, "JetStreamContext"}, {natsPath, "JetStream"},
	{jetstreamPath, "JetStream"}, {jetstreamPath, "Publisher"}, {microPath, "Request"},
}

// msgIDOptionFuncs set a JetStream message ID among a publish's options;
// headerSetters set a header value; msgIDHeader is the header.
var (
	msgIDOptionFuncs = [2]string{jetstreamPath + ".WithMsgID", natsPath + ".MsgId"}
	headerSetters    = setOf(natsPath+".Header.Set", natsPath+".Header.Add")
)

const msgIDHeader = "Nats-Msg-Id"

// Operation IDs (issue 12).
var (
	// opIDOptionFunc sets a shim request's operation ID among its call
	// options: with the same ID on every attempt, a responder that keys its
	// effect on the ID runs it once, so the retry is not a finding.
	opIDOptionFunc = shimPath + ".OperationID"
	// opIDRequests are the shim requests an operation ID protects.
	opIDRequests = setOf(shimPath+".Client.Request", shimPath+".Client.RequestMsg")
)

// newErrorFuncs return a new, never nil error: an error passed through
// them no longer tells whether the send failed. fmt.Errorf with %w keeps
// the send's error for errors.Is, which the error-flow labels read.
var newErrorFuncs = setOf(fmtErrorf, "errors.New", "errors.Join")

const (
	fmtErrorf = "fmt.Errorf"
	errorsIs  = "errors.Is"
)

// The nats.go names the reconnectbuf check reads (connect.go): the
// connect calls, the options that set reconnect buffering, the Options
// fields they set and the default Options.
const (
	connectFunc         = natsPath + ".Connect"
	optionsConnect      = natsPath + "." + optionsType + ".Connect"
	reconnectBufOption  = natsPath + ".ReconnectBufSize"
	noReconnectOption   = natsPath + ".NoReconnect"
	defaultOptionsFunc  = natsPath + ".GetDefaultOptions"
	optionsType         = "Options" // of natsPath
	optionType          = "Option"  // of natsPath
	reconnectBufField   = "ReconnectBufSize"
	allowReconnectField = "AllowReconnect"
)

// msgType is nats.Msg, whose headerField holds a message's headers;
// apiErrorCodeField is the field of apiErrorTypes compared with
// refusedCodes.
const (
	msgType           = "Msg" // of natsPath
	headerField       = "Header"
	apiErrorCodeField = "ErrorCode"
)

// controlTypes say how long a send may take, not what it sends: an
// argument of these types is neither body nor target (args.go).
var controlTypes = [][2]string{{"context", "Context"}, {"time", "Duration"}}

// fixTargets are the shim functions the suggested fixes rewrite raw sends
// to, by fixKind: the function, the nats.go type of the receiver that
// becomes its first argument, the raw call's argument count and what the
// rewrite appends to the arguments.
var fixTargets = map[fixKind]struct {
	fn, recvType string
	nargs        int
	extra        string
}{
	fixPublish:    {"Publish", "Conn", 2, ""},
	fixPublishMsg: {"PublishMsg", "Conn", 1, ""},
	fixRespond:    {"Respond", "Msg", 1, ", nil"},
}

const (
	shimClassify   = shimPath + ".Classify"
	shimMayHaveRun = shimPath + ".MayHaveRun"
)

// noReturnFuncs are the functions and methods that do not return (besides
// the builtin panic): they end a path. ctrlflow would infer most of them,
// but not interface methods (testing.TB) or loggers that exit through a
// hook (zap), and requiring it costs a CFG of every function of every
// dependency (measured: about 15% of the no-op floor's CPU). Functions of
// the analyzed packages are inferred instead (noreturn.go).
var noReturnFuncs = setOf(
	"os.Exit", "runtime.Goexit", "syscall.Exit",
	"log.Fatal", "log.Fatalf", "log.Fatalln", "log.Panic", "log.Panicf", "log.Panicln",
	"log.Logger.Fatal", "log.Logger.Fatalf", "log.Logger.Fatalln", "log.Logger.Panic", "log.Logger.Panicf", "log.Logger.Panicln",
	"testing.common.Fatal", "testing.common.Fatalf", "testing.common.FailNow",
	"testing.common.Skip", "testing.common.Skipf", "testing.common.SkipNow",
	"testing.TB.Fatal", "testing.TB.Fatalf", "testing.TB.FailNow",
	"testing.TB.Skip", "testing.TB.Skipf", "testing.TB.SkipNow",
	"k8s.io/klog/v2.Fatal", "k8s.io/klog/v2.Fatalf", "k8s.io/klog/v2.Fatalln", "k8s.io/klog/v2.Exit", "k8s.io/klog/v2.Exitf",
	"github.com/golang/glog.Fatal", "github.com/golang/glog.Fatalf", "github.com/golang/glog.Exit", "github.com/golang/glog.Exitf",
	"go.uber.org/zap.Logger.Fatal", "go.uber.org/zap.Logger.Panic",
	"go.uber.org/zap.SugaredLogger.Fatal", "go.uber.org/zap.SugaredLogger.Fatalf", "go.uber.org/zap.SugaredLogger.Fatalw",
	"go.uber.org/zap.SugaredLogger.Panic", "go.uber.org/zap.SugaredLogger.Panicf", "go.uber.org/zap.SugaredLogger.Panicw",
	"github.com/sirupsen/logrus.Fatal", "github.com/sirupsen/logrus.Fatalf", "github.com/sirupsen/logrus.Fatalln",
	"github.com/sirupsen/logrus.Panic", "github.com/sirupsen/logrus.Panicf",
	"github.com/sirupsen/logrus.Logger.Fatal", "github.com/sirupsen/logrus.Logger.Fatalf",
	"github.com/sirupsen/logrus.Entry.Fatal", "github.com/sirupsen/logrus.Entry.Fatalf",
	"github.com/sirupsen/logrus.FieldLogger.Fatal", "github.com/sirupsen/logrus.FieldLogger.Fatalf",
	"github.com/rs/zerolog/log.Fatal", "github.com/rs/zerolog/log.Panic",
)

// testFailFuncs fail a test: a loop whose success path calls one checks
// that each send fails (a table-driven negative test), it is no retry.
var testFailFuncs = setOf(
	"testing.common.Fatal", "testing.common.Fatalf", "testing.common.FailNow",
	"testing.common.Error", "testing.common.Errorf", "testing.common.Fail",
	"testing.TB.Fatal", "testing.TB.Fatalf", "testing.TB.FailNow",
	"testing.TB.Error", "testing.TB.Errorf", "testing.TB.Fail",
)

// pureFuncs return a result that depends only on their arguments: a
// message ID computed with them from fixed inputs is fixed, and an
// argument computed with them is the same on every attempt.
var pureFuncs = setOf(
	"fmt.Sprint", "fmt.Sprintf", "fmt.Sprintln",
	"strconv.Itoa", "strconv.FormatInt", "strconv.FormatUint", "strconv.Quote",
	"strings.Join", "strings.ToLower", "strings.ToUpper", "strings.TrimSpace", "strings.ReplaceAll",
	"path.Join", "context.Background", "context.TODO",
	"crypto/sha256.Sum256", "crypto/sha1.Sum", "crypto/md5.Sum", "crypto/sha512.Sum512",
	"hash/crc32.ChecksumIEEE",
	"encoding/hex.EncodeToString",
	"encoding/base64.Encoding.EncodeToString", "encoding/base32.Encoding.EncodeToString",
	"encoding/json.Marshal",
	"github.com/google/uuid.NewSHA1", "github.com/google/uuid.NewMD5",
)

// retryLibrary is what the retry check knows of one retry library: its
// package, its helpers (Func or Type.Method: the functions whose function
// argument is retried), how they decide to call it again (kind), the
// functions marking an error permanent (helperOnError) or retryable
// (helperOnMarked), the options whose predicate argument decides which
// errors are retried (retryIf), the helpers taking such a predicate, by
// argument index (predicateArg), and the helpers retrying only Kubernetes
// conflict errors, which no NATS send returns (onlyConflict). Teaching the
// check a library is one entry here and a test; DefaultRetryHelpers and
// the look-ups below are derived from the table.
type retryLibrary struct {
	pkg          string
	helpers      []string
	kind         helperKind
	markers      []string
	retryIf      []string
	predicateArg map[string]int
	onlyConflict []string
}

// retryLibraries are the retry libraries of DefaultRetryHelpers.
var retryLibraries = []retryLibrary{
	// v2.2.1+incompatible and older
	{pkg: "github.com/cenkalti/backoff", helpers: []string{"Retry", "RetryNotify"}, kind: helperOnError, markers: []string{"Permanent"}},
	{pkg: "github.com/cenkalti/backoff/v3", helpers: []string{"Retry", "RetryNotify"}, kind: helperOnError, markers: []string{"Permanent"}},
	{pkg: "github.com/cenkalti/backoff/v4", helpers: []string{"Retry", "RetryNotify", "RetryWithData", "RetryNotifyWithData"}, kind: helperOnError, markers: []string{"Permanent"}},
	{pkg: "github.com/cenkalti/backoff/v5", helpers: []string{"Retry", "RetryNotify"}, kind: helperOnError, markers: []string{"Permanent"}},
	{pkg: "github.com/avast/retry-go", helpers: []string{"Do", "DoWithData"}, kind: helperOnError, markers: []string{"Unrecoverable"}, retryIf: []string{"RetryIf"}},
	{pkg: "github.com/avast/retry-go/v4", helpers: []string{"Do", "DoWithData"}, kind: helperOnError, markers: []string{"Unrecoverable"}, retryIf: []string{"RetryIf"}},
	{pkg: "github.com/sethvargo/go-retry", helpers: []string{"Do", "DoValue"}, kind: helperOnMarked, markers: []string{"RetryableError"}},
	{pkg: "k8s.io/client-go/util/retry", helpers: []string{"OnError", "RetryOnConflict"}, kind: helperOnError,
		predicateArg: map[string]int{"OnError": 1}, onlyConflict: []string{"RetryOnConflict"}},
	{pkg: "k8s.io/apimachinery/pkg/util/wait", kind: helperPoll, helpers: []string{
		"Poll", "PollImmediate", "PollInfinite", "PollImmediateInfinite",
		"PollWithContext", "PollImmediateWithContext", "PollInfiniteWithContext", "PollImmediateInfiniteWithContext",
		"PollUntil", "PollImmediateUntil", "PollUntilWithContext", "PollImmediateUntilWithContext",
		"PollUntilContextTimeout", "PollUntilContextCancel",
		"ExponentialBackoff", "ExponentialBackoffWithContext",
	}},
}

// The look-ups derived from retryLibraries: the library of a package,
// the retryIf options, the predicate arguments and the conflict-only
// helpers by funcKey.
var (
	retryLibraryOf      = make(map[string]*retryLibrary)
	retryIfOptions      = make(map[string]bool)
	predicateArgs       = make(map[string]int)
	onlyConflictHelpers = make(map[string]bool)
)

func init() {
	for i := range retryLibraries {
		lib := &retryLibraries[i]
		retryLibraryOf[lib.pkg] = lib
		for _, o := range lib.retryIf {
			retryIfOptions[lib.pkg+"."+o] = true
		}
		for h, arg := range lib.predicateArg {
			predicateArgs[lib.pkg+"."+h] = arg
		}
		for _, h := range lib.onlyConflict {
			onlyConflictHelpers[lib.pkg+"."+h] = true
		}
	}
}

// DefaultRetryHelpers returns the retry helpers DefaultConfig lists: the
// helpers of every library the retry check knows (the Retry functions of
// github.com/cenkalti/backoff, without a major version, v3, v4 and v5; Do
// of github.com/avast/retry-go and github.com/sethvargo/go-retry; OnError
// and RetryOnConflict of k8s.io/client-go/util/retry; the Poll* and
// ExponentialBackoff functions of k8s.io/apimachinery/pkg/util/wait).
func DefaultRetryHelpers() []string {
	var hs []string
	for _, lib := range retryLibraries {
		for _, h := range lib.helpers {
			hs = append(hs, lib.pkg+"."+h)
		}
	}
	return hs
}

// union returns the names of both sets.
func union(a, b map[string]bool) map[string]bool {
	u := make(map[string]bool, len(a)+len(b))
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
