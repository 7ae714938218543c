// Command golangci-lint is golangci-lint v2 with the natssend module plugin
// compiled in.
//
// It is what `golangci-lint custom` would build from the repository's
// .custom-gcl.yml, made without git or network access: `custom` clones
// golangci-lint, writes a plugins.go holding one blank import per plugin next
// to the command's main.go, adds the plugin module to go.mod and builds. This
// module instead requires golangci-lint as an ordinary dependency (so every
// byte comes through the Go module proxy and is checked against go.sum),
// carries a copy of golangci-lint's cmd/golangci-lint/main.go, and adds the
// same blank import of github.com/natssend/natssend/plugin. A replace
// directive points that import at this repository's working tree.
//
// It is a module of its own so that golangci-lint's large dependency tree
// stays out of the natssend module. Build it from the repository root with
//
//	cd tools/golangci && go build -o ../../bin/golangci-lint .
//
// and run it with the repository's configuration:
//
//	./bin/golangci-lint run ./...
//
// `golangci-lint version` reports the golangci-lint version this module
// requires, suffixed with "-custom-natssend".
package main
