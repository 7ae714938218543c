// A service module of one's own that pins natssend-lint with a tool
// directive (Go 1.24+). The replace points at this checkout, as long as
// natssend is not published; with a release, drop the replace and run
// go get -tool github.com/natssend/natssend/cmd/natssend-lint@vX.Y.Z.
module example.com/quotes

go 1.26.0

require (
	github.com/nats-io/nats.go v1.55.0
	github.com/natssend/natssend v0.0.0-00010101000000-000000000000
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/minio/highwayhash v1.0.4 // indirect
	github.com/nats-io/nkeys v0.4.16 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

replace github.com/natssend/natssend => ../..

tool github.com/natssend/natssend/cmd/natssend-lint
