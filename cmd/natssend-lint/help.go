package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/natssend/natssend/analyzer"
)

// helpCategories are the categories help documents, in the order of
// docs/checks.md.
var helpCategories = []string{
	analyzer.CategoryRawSend,
	analyzer.CategoryRetry,
	analyzer.CategoryReconnectBuf,
	analyzer.CategoryReceiver,
	analyzer.CategoryHandler,
	analyzer.CategoryUnjudged,
	analyzer.CategoryDelegated,
	analyzer.CategoryDirective,
	analyzer.CategoryReviewed,
}

// help runs "natssend-lint help [category...]": with no category, the
// usage that -help prints (on stdout here) and every category's
// documentation link; with categories, their links. An unknown category is
// a usage error.
func help(args []string, stdout, stderr io.Writer) int {
	var names []string
	for i, a := range args {
		if a == "help" {
			names = args[i+1:]
			break
		}
	}
	if len(names) == 0 {
		// The flag package prints the usage on the flag set's output.
		_, _ = parseFlags([]string{"-help"}, stdout)
		fmt.Fprintln(stdout, "\nCategories:")
		names = helpCategories
	}
	code := exitOK
	for _, n := range names {
		if !slices.Contains(helpCategories, n) {
			fmt.Fprintf(stderr, "natssend-lint: help: unknown category %q (known: %s)\n", n, strings.Join(helpCategories, ", "))
			code = exitUsage
			continue
		}
		fmt.Fprintf(stdout, "  %-13s %s\n", n, checksURL+n)
	}
	return code
}
