# natssend: build, test, lint, bench, fuzz, golangci.
#
#   make test       the whole test suite (gofmt, go vet, go test): the README's test command
#   make example    natssend-lint over the unsafe example service (findings expected)
#   make lint       natssend-lint over this repository, examples included: examples/unsafe's
#                   findings checked against examples/unsafe/findings.txt, the Example functions
#                   linted as user code
#   make tool-recipe  the README's tool directive recipe: go tool natssend-lint and go vet -vettool
#                   in examples/toolrecipe, a module of one's own that pins the linter
#   make docs-check the README's and docs/'s runnable shell snippets, run as pasted in a copy of
#                   the checkout (DOCS_CHECK_SLOW=1 also runs the golangci-lint build)
#   make golangci   build golangci-lint with the natssend plugin (tools/golangci) and run it
#   make golangci-test  the plugin's end-to-end test with that binary
#   make bench      benchmarks of the shim and claim checks against raw nats.go
#   make bench-fast the publish and request hot path against raw nats.go, as ratios (BENCH_COUNT=7),
#                   then each publish call interleaved with the raw call (BenchmarkFastPathPaired)
#   make bench-cc   the 64 MiB claim-check round trip against its floor, paired (BENCH_CC_COUNT=3),
#                   and against JetStream's own store and read (tuned, tuned into a new buffer each
#                   run, and nats.go's ordered default),
#                   each leg the faster of two runs per iteration; then 200 concurrent Resolves (of one
#                   claim check, and of 200 different ones) against ObjectStore.GetBytes, every leg in
#                   every iteration
#   make bench-stream  a 64 MiB transfer stream against core NATS in ABBA cycles: one server in a
#                   child process (caller and responder side), then across a gateway with a 20 ms
#                   round trip (STREAM_BENCH_COUNT=3 runs of each)
#   make gateway-reads  4 MiB claim-check reads (Resolve, Open) across a gateway with a 20 ms round
#                   trip (a natstest supercluster with a delay line), 20 rounds, times logged
#   make bench-lint natssend-lint against the no-op and go vet floors on real dependency graphs
#                   (generated modules up to 800 NATS packages and 400 without nats.go, about 270k lines)
#                   (BENCH_MODS=dir,... adds checkouts of public modules, BENCH_RUNS=5)
#   make fuzz       fuzz HeaderSize against nats.go's serializer and the INFO rewrite (FUZZTIME=30000x
#                   executions each by default; a count, not a duration: see the fuzz target)
#   make stress     the publish path under restarts, long, with -race (STRESS_RESTARTS=200 by default)
#   make race       the runtime packages' tests with the race detector
#   make faults     the fault matrix (internal/faultmatrix) and the proxy under -race, FAULTS_COUNT=3 runs
#   make interop    the nats.js peers of interop/ (written from docs/protocol.md) against the Go
#                   side: claim checks both ways, every RPC outcome, 64 MiB streams (npm ci first)
#   make starved    issue 46's run: STARVED_READS=50 claim-checked RPCs of STARVED_SIZE=2 MiB each way
#                   (then as many Resolve/Open/Subscribe reads) at once on a third of one core
#                   (GOMAXPROCS=1, two spinning goroutines), -race; STARVED_PACE_MS=20 also paces
#                   each connection's chunk replies through a proxy (0: none)

GO       ?= go
BIN      := $(CURDIR)/bin
FUZZTIME ?= 30000x
FUZZMINIMIZETIME ?= 500x
STRESS_RESTARTS ?= 200
GOFILES   = $(shell find . -name '*.go' -not -path '*/testdata/*' -not -path './bin/*' -not -path '*/node_modules/*')

.PHONY: all build test fmt-check vet example lint tool-recipe docs-check golangci golangci-build golangci-test bench bench-fast bench-cc bench-stream gateway-reads bench-lint fuzz stress race ci clean faults interop starved

all: build test

build:
	$(GO) build ./...
	$(GO) build -o $(BIN)/natssend-lint ./cmd/natssend-lint

fmt-check:
	@out="$$(gofmt -l $(GOFILES))"; if [ -n "$$out" ]; then echo "not gofmt-clean:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

test: fmt-check vet
	$(GO) test -count=1 ./...

# natssend-lint exits 3 when it reports findings, which the unsafe example is for.
example: build
	$(BIN)/natssend-lint ./examples/unsafe/... || [ $$? -eq 3 ]

# Everything but examples/unsafe must be clean; examples/unsafe must report
# exactly the findings in examples/unsafe/findings.txt. The Example functions
# of shim and claimcheck belong to the shim packages, which natssend exempts:
# the examples' tests lint them as the user code they become when copied.
lint: build
	$(BIN)/natssend-lint $$($(GO) list ./... | grep -v '/examples/unsafe$$')
	$(BIN)/natssend-lint ./examples/unsafe/... 2>/dev/null; test $$? -eq 3
	$(GO) test -count=1 -run '^(TestUnsafeExampleFindings|TestSafeExampleIsClean|TestExampleFunctionsAsUserCode|TestPublicAPIOnly)$$' ./examples/

# A service module that pins natssend-lint with a tool directive and a
# replace to this checkout. -mod=mod lets go.mod follow this module's
# requirements when they changed (then run go mod tidy there and commit it).
TOOL_GOFLAGS = $(shell $(GO) env GOFLAGS) -mod=mod
tool-recipe:
	cd examples/toolrecipe && $(GO) mod tidy -diff >/dev/null || echo "tool-recipe: examples/toolrecipe/go.mod is not tidy: run go mod tidy there"
	cd examples/toolrecipe && GOFLAGS='$(TOOL_GOFLAGS)' $(GO) tool natssend-lint ./...
	cd examples/toolrecipe && GOFLAGS='$(TOOL_GOFLAGS)' $(GO) vet -vettool="$$(GOFLAGS='$(TOOL_GOFLAGS)' $(GO) tool -n natssend-lint)" ./...
	cd examples/toolrecipe && GOFLAGS='$(TOOL_GOFLAGS)' $(GO) tool natssend-lint github.com/natssend/natssend/examples/unsafe 2>/dev/null; test $$? -eq 3

# The README's and docs' runnable snippets (docs/snippets_test.go).
DOCS_CHECK_SLOW ?=
docs-check:
	DOCS_CHECK=1 DOCS_CHECK_SLOW=$(DOCS_CHECK_SLOW) $(GO) test -count=1 -timeout 30m -run '^TestSnippets' -v ./docs/

golangci-build:
	cd tools/golangci && $(GO) build -o $(BIN)/golangci-lint .

golangci: golangci-build
	$(BIN)/golangci-lint run ./...

# The plugin end to end: the built golangci-lint over fixtures and examples/unsafe.
golangci-test: golangci-build
	cd tools/golangci && $(GO) vet ./... && NATSSEND_GOLANGCI_LINT=$(BIN)/golangci-lint $(GO) test -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./shim/ ./claimcheck/

# The hot path against raw nats.go, server in a child process: BENCH_COUNT
# alternating rounds (one test binary run per round, every call in each),
# then the best of each call, its ratio to the raw call's best, and the
# median over the rounds of the ratio within a round.
BENCH_COUNT ?= 7
bench-fast:
	$(GO) test -c -o $(BIN)/shim.test ./shim/
	cd shim && for i in $$(seq $(BENCH_COUNT)); do $(BIN)/shim.test -test.run '^$$' -test.bench '^BenchmarkFastPath(Respond)?$$' -test.benchmem; done | tee /dev/stderr | awk -f ../internal/benchratio/benchratio.awk
	cd shim && $(BIN)/shim.test -test.run '^$$' -test.bench '^BenchmarkFastPathPaired$$' -test.benchtime 2s -test.benchmem

# The 64 MiB claim-check round trip at 1 MiB max_payload against its floor
# (the core NATS transfer plus two SHA-256 passes), paired in every
# iteration, BENCH_CC_COUNT runs; then the raw object store and the legs;
# then 200 concurrent Resolves of one claim check on one Store (sharing one
# read), of 200 different claim checks on it (no sharing) and 200 GetBytes,
# paired, BENCH_CC_COUNT runs.
BENCH_CC_COUNT ?= 3
bench-cc:
	$(GO) test -c -o $(BIN)/claimcheck.test ./claimcheck/
	cd claimcheck && for i in $$(seq $(BENCH_CC_COUNT)); do $(BIN)/claimcheck.test -test.run '^$$' -test.bench '^BenchmarkRoundTripFloor$$' -test.benchtime 10x -test.benchmem; done
	cd claimcheck && $(BIN)/claimcheck.test -test.run '^$$' -test.bench '^BenchmarkRoundTrip$$/maxpayload=1024KiB' -test.benchtime 5x -test.benchmem
	cd claimcheck && $(BIN)/claimcheck.test -test.run '^$$' -test.bench '^BenchmarkConcurrentResolvePaired$$' -test.benchtime 20x -test.count $(BENCH_CC_COUNT)

# A 64 MiB stream against the same bytes as raw core messages, ABBA cycles
# (stream/core and the median cycle's ratio), one server in a child
# process, then across a supercluster's gateway with a 20 ms round trip.
STREAM_BENCH_COUNT ?= 3
bench-stream:
	$(GO) test -c -o $(BIN)/shim.test ./shim/
	cd shim && $(BIN)/shim.test -test.run '^$$' -test.bench '^BenchmarkStreamPaired$$' -test.benchtime 8x -test.count $(STREAM_BENCH_COUNT) -test.benchmem
	cd shim && $(BIN)/shim.test -test.run '^$$' -test.bench '^BenchmarkStreamGateway$$' -test.benchtime 6x -test.count $(STREAM_BENCH_COUNT) -test.benchmem

gateway-reads:
	CLAIMCHECK_GATEWAY_ROUNDS=20 $(GO) test ./claimcheck/ -run '^TestGatewayReadsDoNotStall$$' -count=1 -v

# This repository, generated modules of 50/200/800 packages on the real nats.go
# and large std packages, and BENCH_MODS; warm, cold vet cache, one edit.
BENCH_RUNS ?= 5
BENCH_MODS ?=
bench-lint:
	$(GO) run ./internal/synthgen/cmd/synthbench -runs $(BENCH_RUNS) -sizes 50,200,800 -plain 0.5 -cold 1 -touch -mods '$(BENCH_MODS)'

# Budgets are counts, not durations: with a duration, Go 1.26's fuzz
# coordinator can report its own -fuzztime deadline as a failure
# ("context deadline exceeded", no failing input; golang/go#75804, fixed
# in Go 1.27) when a worker is mid-call at the deadline. FuzzHeaderSize
# makes a round trip to the server per call, so a worker minimizing a new
# input (up to 60 s by default, no progress shown) is often mid-call
# then: minimization is bounded by a count too. FUZZTIME=10m still works
# for a long run, with that race.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzHeaderSize$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./shim/
	$(GO) test -run '^$$' -fuzz '^FuzzInfoRewrite$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./internal/connlimit/

# make test runs the stress test with 20 restarts; this runs it longer.
stress:
	NATSSEND_STRESS_RESTARTS=$(STRESS_RESTARTS) $(GO) test -race -count=1 -timeout 60m -run '^TestStressNoSendClosesTheConnection$$' -v ./shim/

# The runtime (shim, claim checks, limit state, examples) under the race detector.
race:
	$(GO) test -race -count=1 ./shim/... ./claimcheck/... ./internal/... ./examples/...

# Every row of the fault matrix must pass FAULTS_COUNT consecutive runs
# under the race detector (CI: FAULTS_COUNT=1); NATSSEND_MATRIX_PARALLEL
# sets how many rows of a group run at once (4).
FAULTS_COUNT ?= 3
faults:
	$(GO) test -race -count=$(FAULTS_COUNT) -timeout 30m ./internal/natstest/ ./internal/faultmatrix/

# The nats.js peers (interop/, pinned @nats-io packages, package-lock.json)
# against servers and shim/claimcheck peers the Go side starts. Needs
# Node.js 20+ and npm; interop/node_modules is ignored by go.mod.
interop:
	cd interop && npm ci --no-audit --no-fund
	NATSSEND_INTEROP=1 $(GO) test -count=1 -timeout 10m ./interop/


# Issue 46: reads that back off under load. Each test logs its time, the
# read requests and the batches given up and asked for again.
STARVED_READS ?= 50
STARVED_SIZE  ?= 2097152
STARVED_PACE_MS ?= 0
starved:
	GOMAXPROCS=1 NATSSEND_STARVED_READS=$(STARVED_READS) NATSSEND_STARVED_SIZE=$(STARVED_SIZE) NATSSEND_STARVED_SPIN=2 NATSSEND_STARVED_PACE_MS=$(STARVED_PACE_MS) \
		$(GO) test -race -count=1 -timeout 30m -run '^TestStarvedClaimCheckedRPC$$' -v ./internal/faultmatrix/
	GOMAXPROCS=1 NATSSEND_STARVED_READS=$(STARVED_READS) NATSSEND_STARVED_SIZE=$(STARVED_SIZE) NATSSEND_STARVED_SPIN=2 NATSSEND_STARVED_PACE_MS=$(STARVED_PACE_MS) \
		$(GO) test -race -count=1 -timeout 30m -run '^TestStarvedReads$$' -v ./claimcheck/


ci: test interop lint tool-recipe fuzz race faults golangci golangci-test docs-check

clean:
	rm -rf $(BIN)
