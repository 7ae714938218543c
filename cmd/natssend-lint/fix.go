package main

import (
	"fmt"
	"io"
)

// fix runs -fix (without -diff): it checks the packages, has go vet -fix
// apply the fixes, checks again, and reports how many findings the fixes
// removed and lists the ones that remain, as golangci-lint's --fix does.
// The exit status is 3 when findings remain, as without -fix.
//
// All three runs go through go vet (with -skip-tests under -test=false),
// so the counts are those of the packages and files the go command fixes;
// the first and the last share go vet's cache for unchanged packages.
func fix(o *options, stdout, stderr io.Writer) int {
	check1 := *o
	check1.fix = false
	check1.vet = true
	before, code := check(&check1, stdout, io.Discard)
	if before == nil || code != exitOK || len(before.errors) > 0 {
		// Let the run that applies nothing print why it failed.
		res, code := check(&check1, stdout, stderr)
		if res != nil {
			return report(&check1, res, code, stdout, stderr)
		}
		return code
	}
	if len(before.diags) == 0 {
		return exitOK
	}
	if _, code := runVet(o, stdout, stderr); code != exitOK {
		return code
	}
	after, code := check(&check1, stdout, stderr)
	if after == nil {
		return code
	}
	fixed := max(len(before.diags)-len(after.diags), 0)
	switch {
	case len(after.diags) == 0:
		fmt.Fprintf(stderr, "natssend-lint: -fix: fixed %s; none remain\n", plural(fixed, "finding"))
	default:
		fmt.Fprintf(stderr, "natssend-lint: -fix: fixed %s; %s without a fix remain:\n", plural(fixed, "finding"), plural(len(after.diags), "finding"))
	}
	return report(&check1, after, code, stdout, stderr)
}

// plural returns "1 finding" or "n findings".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
