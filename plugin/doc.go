// Package plugin registers natssend as a golangci-lint v2 module plugin.
//
// Importing this package for its side effect (a blank import) registers a
// plugin named "natssend" with github.com/golangci/plugin-module-register.
// A golangci-lint binary built with that import (by `golangci-lint custom`
// from a .custom-gcl.yml, or by the tools/golangci module of this
// repository, which does the same offline) runs natssend when the
// configuration enables it as a module linter:
//
//	version: "2"
//	linters:
//	  enable:
//	    - natssend
//	  settings:
//	    custom:
//	      natssend:
//	        type: module
//	        description: raw NATS sends, retried requests, reconnect buffering
//	        settings:
//	          shim-packages: [example.com/acme/natsx]
//	          retry-helpers: [example.com/acme/retry.Do]
//	          categories: [rawsend, retry, reconnectbuf, receiver, handler]
//	          include-tests: true
//	          audit: false
//	          claim-checks: false
//
// Every setting is optional; a list that is absent or empty keeps the
// analyzer's default (see analyzer.DefaultConfig), include-tests defaults to
// true and audit and claim-checks to false. A list replaces the default list rather than
// adding to it: a project with its own retry helper lists the default ones
// (analyzer.DefaultRetryHelpers) too if it uses them. An unknown setting, a
// value of the wrong type, or an unknown category is an error that names it,
// so a typo fails the run instead of silently changing what is checked.
//
// golangci-lint keeps only the text of a diagnostic, not its category, so the
// plugin starts each message with the category: "rawsend: ", "retry: ",
// "reconnectbuf: ", "directive: " or "reviewed: ". Exclusion rules can select
// a category by that text, for example
//
//	linters:
//	  exclusions:
//	    rules:
//	      - linters: [natssend]
//	        path: _test\.go
//	        text: "^retry: "
//
// The analyzer needs type information, so the plugin asks golangci-lint for
// the "typesinfo" load mode.
package plugin
