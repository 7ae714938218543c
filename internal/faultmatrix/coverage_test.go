package faultmatrix_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The matrix's coverage: every send path has rows in every column, and
// every exported function and method of package shim and package
// claimcheck is either a send path's or named as sending nothing. A new
// exported name fails TestMatrixCoverage until it is placed, and a new
// send path until it has its fault, hostile-peer and permission rows.

// sendPath is a way a message leaves a natssend user (or a stored payload
// is read or deleted).
type sendPath string

const (
	pRequest      sendPath = "request"               // Client.Request, RequestMsg; a handler's reply
	pAttempts     sendPath = "Attempts"              // Attempts, with and without OperationID; Retry
	pMany         sendPath = "RequestMany"           // scatter-gather
	pStreamCall   sendPath = "stream caller"         // RequestStream, RequestMsgStream, ReplyStream
	pStreamResp   sendPath = "stream responder"      // StreamHandler, Stream, StreamWriter
	pCCRequest    sendPath = "claim-checked request" // a request over the limit (WithClaimChecks, ServeClaimChecks)
	pCCReply      sendPath = "claim-checked reply"   // a reply over the limit
	pPublishMsg   sendPath = "Store.PublishMsg"      // PublishMsg, Prepare; shim.Publish*
	pPublishJS    sendPath = "Store.PublishJetStream"
	pRead         sendPath = "Store read"   // Resolve, Open and the subscription helpers' reads
	pDelete       sendPath = "Store delete" // Discard, DeleteAfterRead
	noSend        sendPath = ""             // sends nothing of its own: an option, an accessor, a classification
	columnFault            = "fault"
	columnHostile          = "hostile peer"
	columnPerm             = "permission"
)

// sendPaths are the matrix's rows of paths, in order.
var sendPaths = []sendPath{pRequest, pAttempts, pMany, pStreamCall, pStreamResp, pCCRequest, pCCReply, pPublishMsg, pPublishJS, pRead, pDelete}

// columns are the matrix's columns.
var columns = []string{columnFault, columnHostile, columnPerm}

// apiPaths places every exported function and method of shim and
// claimcheck ("pkg.Func", "pkg.Type.Method") on the send path whose rows
// cover it, or on noSend.
var apiPaths = map[string]sendPath{
	"shim.Client.Request": pRequest, "shim.Client.RequestMsg": pRequest, "shim.Handler": pRequest, "shim.JSONHandler": pRequest,
	"shim.Unary": pRequest, "shim.JSON": pRequest, "shim.Serve": pRequest, "shim.ServeQueue": pRequest, "shim.Respond": pRequest,
	"shim.RespondError": pRequest, "shim.AddEndpoint": pRequest, "shim.RespondMicro": pRequest, "shim.RespondMicroError": pRequest,
	"shim.Connect": pRequest, "shim.CapPayload": pRequest,
	"shim.Attempts": pAttempts, "shim.AttemptTimeout": pAttempts, "shim.OperationID": pAttempts, "shim.Retry": pAttempts,
	"shim.Client.RequestMany": pMany, "shim.MaxReplies": pMany, "shim.Sentinel": pMany, "shim.StallTimeout": pMany,
	"shim.Client.RequestStream": pStreamCall, "shim.Client.RequestMsgStream": pStreamCall, "shim.ReplyStream.Read": pStreamCall,
	"shim.ReplyStream.WriteTo": pStreamCall, "shim.ReplyStream.Close": pStreamCall, "shim.StreamWindow": pStreamCall, "shim.StreamIdle": pStreamCall,
	"shim.StreamHandler": pStreamResp, "shim.Stream": pStreamResp, "shim.StreamWriter.Write": pStreamResp, "shim.StreamWriter.Flush": pStreamResp,
	"shim.WithClaimChecks": pCCRequest, "shim.ResolveMicro": pCCRequest,
	"shim.ServeClaimChecks": pCCReply, "shim.RespondMicroClaimCheck": pCCReply,
	"claimcheck.New": pPublishMsg, "claimcheck.Store.PublishMsg": pPublishMsg, "claimcheck.Store.Prepare": pPublishMsg,
	"shim.Publish": pPublishMsg, "shim.PublishContext": pPublishMsg, "shim.PublishMsg": pPublishMsg, "shim.PublishMsgContext": pPublishMsg,
	"claimcheck.Store.PublishJetStream": pPublishJS,
	"claimcheck.Store.Resolve":          pRead, "claimcheck.Store.Open": pRead, "claimcheck.Store.ResolveJetStream": pRead,
	"claimcheck.Store.Subscribe": pRead, "claimcheck.Store.QueueSubscribe": pRead, "claimcheck.Store.Consume": pRead,
	"claimcheck.Store.Messages": pRead, "claimcheck.Messages.Next": pRead,
	"claimcheck.Store.Discard": pDelete, "claimcheck.DeleteAfterRead": pDelete,

	// Options, accessors and the outcome vocabulary: they send nothing.
	"shim.Backoff": noSend, "shim.BaseContext": noSend, "shim.Classify": noSend, "shim.Client.Err": noSend, "shim.Client.Limit": noSend,
	"shim.Conn": noSend, "shim.Describe": noSend, "shim.EmptyReply": noSend, "shim.Error.Error": noSend, "shim.Error.Is": noSend,
	"shim.Error.Outcome": noSend, "shim.Error.Unwrap": noSend, "shim.HeaderSize": noSend, "shim.InvalidArgument": noSend,
	"shim.MaxAttempts": noSend, "shim.MayHaveRun": noSend, "shim.MsgSize": noSend, "shim.NewClient": noSend, "shim.OnError": noSend,
	"shim.OperationIDFrom": noSend, "shim.Outcome.String": noSend, "shim.Reject": noSend, "shim.ReplyStream.Header": noSend,
	"shim.StreamWriter.Header": noSend, "shim.Telemetry": noSend, "shim.Timeout": noSend, "shim.WithHeader": noSend,
	"shim.WithPayloadCap": noSend, "shim.WithTelemetry": noSend, "shim.WithTimeout": noSend,
	"claimcheck.IsClaimCheck": noSend, "claimcheck.Messages.Drain": noSend, "claimcheck.Messages.Stop": noSend, "claimcheck.NakDelay": noSend,
	"claimcheck.PullConsumeOpts": noSend, "claimcheck.PullMessagesOpts": noSend, "claimcheck.ResolveError.Error": noSend,
	"claimcheck.ResolveError.Permanent": noSend, "claimcheck.ResolveError.Unwrap": noSend, "claimcheck.Store.Bucket": noSend,
	"claimcheck.Store.Close": noSend, "claimcheck.Store.Conn": noSend, "claimcheck.Store.Domain": noSend, "claimcheck.Store.ObjectStore": noSend,
	"claimcheck.WithBucket": noSend, "claimcheck.WithCleanupTimeout": noSend, "claimcheck.WithDomains": noSend, "claimcheck.WithMaxChunkSize": noSend,
	"claimcheck.WithMaxObjectSize": noSend, "claimcheck.WithOpenWindow": noSend, "claimcheck.WithReadTimeout": noSend,
	"claimcheck.WithReplicas": noSend, "claimcheck.WithStorage": noSend, "claimcheck.WithSubjectBinding": noSend,
	"claimcheck.WithSubjectMatch": noSend, "claimcheck.WithTTL": noSend, "claimcheck.WithTelemetry": noSend,
}

// cell is one send path in one column.
type cell struct {
	path   sendPath
	column string
}

// citedTests are the tests that cover a cell besides the rows of
// secRows: this package's test functions (checked to exist), or another
// package's, "pkg/file_test.go:TestName" (checked to exist in that file).
var citedTests = map[cell][]string{
	{pRequest, columnFault}:    {"TestRequest", "TestHandlerReplies", "TestPublish", "TestMicro"},
	{pAttempts, columnFault}:   {"TestAttempts", "TestAttemptsDeadlines", "TestRetry"},
	{pMany, columnFault}:       {"TestRequestMany"},
	{pStreamCall, columnFault}: {"TestStream"},
	{pStreamResp, columnFault}: {"TestStream", "TestStreamConcurrentWriters"},
	{pCCRequest, columnFault}:  {"TestClaimCheckedRequest", "TestClusterLeaderLoss"},
	{pCCReply, columnFault}:    {"TestClaimCheckedReply"},
	{pPublishMsg, columnFault}: {"TestStore", "TestPublish"},
	{pPublishJS, columnFault}:  {"TestStore"},
	{pRead, columnFault}:       {"TestStore", "TestReadPath", "TestClusterReadLeaderLoss", "TestSubscribeHelpers"},
	{pDelete, columnFault}:     {"TestSubscribeHelpers"},

	{pStreamCall, columnHostile}: {"TestStreamHostileResponder", "shim/stream_hostile_test.go:TestStreamInconsistentFrames",
		"shim/stream_abuse_test.go:TestStreamTinyFramesHoldAboutTheWindow"},
	{pStreamResp, columnHostile}: {"TestStreamHostileCaller", "shim/stream_abuse_test.go:TestStreamResendFloodIsNotAmplified",
		"shim/stream_abuse_test.go:TestStreamIdleBoundAboveMaxRefused"},
	{pRead, columnHostile}: {"TestReadForgedSizes", "claimcheck/integrity_test.go:TestForgedReferenceToAnotherSubjectRefused",
		"claimcheck/integrity_test.go:TestCorruptHeadersRefused", "claimcheck/forgedmeta_test.go:TestOpenWindowHoldsWhenTheChunkSizeLies"},
	{pRead, columnPerm}:      {"../permsets/isolation_test.go:TestBucketPerServiceIsolates"},
	{pPublishJS, columnPerm}: {"shim/permission_test.go:TestPermissionDeniedIsAnError"},
}

// TestMatrixCoverage: every exported name of shim and claimcheck is on a
// send path or sends nothing; every send path has rows (or cited tests)
// in every column; every row names a known path and column.
func TestMatrixCoverage(t *testing.T) {
	for _, dir := range []string{"../../shim", "../../claimcheck"} {
		for _, name := range exportedNames(t, dir) {
			if _, ok := apiPaths[name]; !ok {
				t.Errorf("%s is exported and on no send path: place it in apiPaths (a send path, whose rows must then cover it, or noSend)", name)
			}
		}
	}
	tests := testNames(t, ".")
	count := map[cell]int{}
	for _, r := range secRows() {
		if !slices.Contains(sendPaths, r.path) || (r.column != columnHostile && r.column != columnPerm) {
			t.Errorf("row %q: unknown path %q or column %q", r.name, r.path, r.column)
		}
		count[cell{r.path, r.column}]++
	}
	for c, cited := range citedTests {
		for _, name := range cited {
			if !citedExists(t, tests, name) {
				t.Errorf("%s × %s cites %s, which does not exist", c.path, c.column, name)
			}
		}
		count[c] += len(cited)
	}
	for _, p := range sendPaths {
		for _, col := range columns {
			if count[cell{p, col}] == 0 {
				t.Errorf("send path %q has no %s rows", p, col)
			}
		}
	}
}

// exportedNames are the exported functions and methods (of exported
// types) of the package in dir, outside its tests: "pkg.Func",
// "pkg.Type.Method".
func exportedNames(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	for _, f := range parseGoFiles(t, dir, false) {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			name := f.Name.Name + "."
			if fd.Recv != nil {
				typ := fd.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				id, ok := typ.(*ast.Ident)
				if !ok || !id.IsExported() {
					continue
				}
				name += id.Name + "."
			}
			names = append(names, name+fd.Name.Name)
		}
	}
	if len(names) == 0 {
		t.Fatalf("no exported names in %s", dir)
	}
	return names
}

// testNames are the Test functions of the _test files in dir.
func testNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, f := range parseGoFiles(t, dir, true) {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") {
				names[fd.Name.Name] = true
			}
		}
	}
	return names
}

// citedExists reports whether a cited test exists: one of tests, or
// "path/file_test.go:TestName" relative to the module root ("../x" from
// internal/).
func citedExists(t *testing.T, tests map[string]bool, cited string) bool {
	file, name, ok := strings.Cut(cited, ":")
	if !ok {
		return tests[cited]
	}
	path := "../../" + file
	if strings.HasPrefix(file, "../") {
		path = file
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Logf("%s: %v", cited, err)
		return false
	}
	return strings.Contains(string(b), "\nfunc "+name+"(t *testing.T)")
}

// parseGoFiles parses the Go files of dir: its tests when tests is true,
// the others when it is false (go/parser's ParseDir is deprecated).
func parseGoFiles(t *testing.T, dir string, tests bool) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") != tests {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}
