package main_test

import (
	"regexp"
	"slices"
	"testing"
)

// Packages whose facts decide findings elsewhere, but which do not import
// nats.go: the in-process load and go vet must agree on them.
func init() {
	natslib["exit/exit.go"] = `// Package exit ends programs and retries, with no NATS in sight.
package exit

import (
	"fmt"
	"os"
)

// Done prints msg and ends the program.
func Done(msg string) {
	fmt.Println(msg)
	os.Exit(0)
}

// Retry calls op until it succeeds, at most n times.
func Retry(n int, op func() error) error {
	var err error
	for i := 0; i < n; i++ {
		if err = op(); err == nil {
			return nil
		}
	}
	return err
}
`
	fixture["util/util.go"] = `// Package util is the module's own toolbox; it does not import nats.go.
package util

import (
	"fmt"
	"os"
	"time"
)

// Done prints msg and ends the program.
func Done(msg string) {
	fmt.Println(msg)
	os.Exit(0)
}

// Again calls op until it succeeds, at most n times, pausing in between.
func Again(n int, op func() error) error {
	var err error
	for i := 0; i < n; i++ {
		if err = op(); err == nil {
			return nil
		}
		time.Sleep(time.Duration(i) * 50 * time.Millisecond)
	}
	return err
}
`
	fixture["quiet/quiet.go"] = `// Package quiet keeps its connection to itself: nothing it exports
// mentions a nats.go type.
package quiet

import (
	"errors"
	"sync"

	"github.com/nats-io/nats.go"
)

var (
	mu   sync.Mutex
	conn *nats.Conn
)

var errNotConnected = errors.New("quiet: not connected")

// Send publishes body on the events subject.
func Send(body []byte) error {
	mu.Lock()
	defer mu.Unlock()
	if conn == nil {
		return errNotConnected
	}
	return conn.Publish("events", body)
}
`
	fixture["user/user.go"] = `// Package user sends only through package quiet.
package user

import "example.com/fixture/quiet"

// Emit publishes body, trying again on failure.
func Emit(body []byte) error {
	var err error
	for i := 0; i < 3; i++ {
		if err = quiet.Send(body); err == nil {
			return nil
		}
	}
	return err
}
`
	fixture["svc/svc.go"] = `// Package svc ends programs and retries through helpers that do not
// import nats.go, in this module and in another.
package svc

import (
	"time"

	"github.com/nats-io/nats.go"

	"example.com/fixture/util"
	"example.com/natslib/exit"
)

// PublishJob publishes the job once and ends the program; a failed
// publish is tried again.
func PublishJob(nc *nats.Conn, job []byte) {
	for {
		if err := nc.Publish("jobs", job); err != nil {
			time.Sleep(time.Second)
			continue
		}
		util.Done("published")
	}
}

// PublishReport is PublishJob ending through another module's helper.
func PublishReport(nc *nats.Conn, report []byte) {
	for {
		if err := nc.Publish("reports", report); err != nil {
			time.Sleep(time.Second)
			continue
		}
		exit.Done("published")
	}
}

// Announce publishes through the module's retry helper.
func Announce(nc *nats.Conn, body []byte) error {
	return util.Again(3, func() error { return nc.Publish("announce", body) })
}

// Broadcast publishes through another module's retry helper.
func Broadcast(nc *nats.Conn, body []byte) error {
	return exit.Retry(3, func() error { return nc.Publish("broadcast", body) })
}
`
}

// TestFactsOutsideNATS: facts about functions of packages that do not
// import nats.go (a function that does not return, a retry helper) are
// inferred in the packages of the main module only, so that the in-process
// load, which reads other modules' non-NATS packages from export data, and
// go vet, which analyzes every package, report the same, also when the
// helpers' package is not named; and a package that imports nats.go only
// through a package whose export data does not mention nats.go is checked
// by both.
func TestFactsOutsideNATS(t *testing.T) {
	t.Parallel()
	bin := buildLint(t)
	want := map[string]*regexp.Regexp{
		"util.Done ends the success path":  regexp.MustCompile(`^svc/svc\.go:18:\d+:.*\(\*nats\.Conn\)\.Publish.*retried`),
		"util.Again retries its function":  regexp.MustCompile(`^svc/svc\.go:39:\d+:.*\(\*nats\.Conn\)\.Publish.*retried`),
		"quiet.Send sends, user is judged": regexp.MustCompile(`^user/user\.go:10:\d+:.*quiet\.Send.*retried`),
	}
	// Another module's packages without NATS are not analyzed standalone,
	// so their facts count under go vet neither.
	notWant := regexp.MustCompile(`^svc/svc\.go:(29|44):`)
	for _, patterns := range [][]string{{"./svc", "./user"}, {"./..."}} {
		// A fresh copy each time: go vet caches a package's output under
		// the same key whether it was named or only vetted for the facts
		// of another, so one run's cache would change the next's output.
		dir := setup(t)
		code, stdout, stderr := run(t, dir, bin, append([]string{"-json"}, patterns...)...)
		if code != jsonExit(stdout) {
			t.Fatalf("natssend-lint -json %v: exit %d\n%s", patterns, code, stderr)
		}
		standalone := vetFindings(t, dir, stdout)
		code, stdout, stderr = run(t, dir, "go", append([]string{"vet", "-vettool=" + bin, "-json"}, patterns...)...)
		if code != 0 {
			t.Fatalf("go vet -json %v: exit %d\n%s", patterns, code, stderr)
		}
		if vet := vetFindings(t, dir, stdout); !slices.Equal(standalone, vet) {
			t.Errorf("%v: natssend-lint -json and go vet -vettool -json differ:\nstandalone %v\ngo vet     %v", patterns, standalone, vet)
		}
		for what, re := range want {
			if !slices.ContainsFunc(standalone, func(f finding) bool { return re.MatchString(f.Posn + ": " + f.Message) }) {
				t.Errorf("%v: %s: no finding matching %s in %v", patterns, what, re, standalone)
			}
		}
		for _, f := range standalone {
			if notWant.MatchString(f.Posn) && f.Category == "retry" {
				t.Errorf("%v: a fact of another module's package without NATS was used: %v", patterns, f)
			}
		}
	}
}
