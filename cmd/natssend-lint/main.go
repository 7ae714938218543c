package main

import (
	"os"
	"strings"

	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/natssend/natssend/analyzer"
)

func main() {
	if vetProtocol(os.Args[1:]) {
		// Invoked by the go command (-V=full, -flags, one unit.cfg):
		// x/tools' own unitchecker, through singlechecker.
		singlechecker.Main(analyzer.Analyzer)
		return
	}
	os.Exit(drive(os.Args[1:], os.Stdout, os.Stderr))
}

// vetProtocol reports whether args are those of the vet tool protocol that
// the go command speaks to a -vettool (-V=full, -flags, a single *.cfg
// after the tool's flags), rather than a user's package patterns or
// "help" (which drive answers). (The go command passes the tool's flags
// and then the unit's vet.cfg; no package pattern ends in ".cfg".)
func vetProtocol(args []string) bool {
	for _, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			break
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "V" || name == "flags" {
			return true
		}
	}
	n := len(args)
	return n > 0 && strings.HasSuffix(args[n-1], ".cfg")
}

// firstArg returns the first argument that is not a flag, or "". A flag's
// value given as a separate argument is not recognised; help is expected
// first anyway.
func firstArg(args []string) string {
	for _, a := range args {
		if a == "--" {
			return ""
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}
