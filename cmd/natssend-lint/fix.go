package main

import (
	"fmt"
	"go/format"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// fix runs -fix: it checks the packages, and has go vet -fix apply the
// fixes (with -diff, prints itself, as a unified diff that git apply and
// patch -p1 accept, the files go vet -fix would write), checks again, and reports how many findings the
// fixes removed and lists the ones that remain, as golangci-lint's --fix
// does. The exit status is 3 when findings remain, as without -fix.
//
// Before it edits anything it makes sure the edited module can build the
// result: when a fix adds the shim import and the module cannot load the
// shim package (natssend not required, go.sum entries missing), it edits
// nothing and prints the command to run first. After editing, a package
// that no longer builds is an error (exit status 1), not "none remain".
//
// Every run goes through go vet (with -skip-tests under -test=false), so
// the counts are those of the packages and files the go command fixes;
// the runs share go vet's cache for unchanged packages.
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
	plan, err := planFixes(before)
	if err != nil {
		fmt.Fprintf(stderr, "natssend-lint: -fix: %v\n", err)
		return exitError
	}
	// -diff too: a patch whose result does not build is no better than
	// files that do not.
	if plan.shim {
		if why := shimMissing(o); why != "" {
			fmt.Fprintf(stderr, "natssend-lint: -fix: changed nothing: the fixes import %s, which this module cannot build yet (%s). %s\n\nthen run natssend-lint -fix again.\n", shimPkg, why, shimRemedy())
			return exitError
		}
	}
	if o.diff {
		return printDiff(plan, stdout, stderr)
	}
	if len(plan.files) == 0 {
		fmt.Fprintf(stderr, "natssend-lint: -fix: fixed 0 findings; %s without a fix remain:\n", plural(before.findings(), "finding"))
		return report(&check1, before, exitOK, stdout, stderr)
	}
	if _, code := runVet(o, stdout, stderr); code != exitOK {
		return code
	}
	after, code := check(&check1, stdout, stderr)
	if after == nil {
		return code
	}
	if code != exitOK || len(after.errors) > 0 {
		fmt.Fprintf(stderr, "natssend-lint: -fix: applied the fixes of %s, but the packages no longer build or check (above); undo with your version control\n", plural(plan.fixes, "finding"))
		return exitError
	}
	fixed := max(before.findings()-after.findings(), 0)
	switch {
	case after.findings() == 0:
		fmt.Fprintf(stderr, "natssend-lint: -fix: fixed %s; none remain\n", plural(fixed, "finding"))
	default:
		fmt.Fprintf(stderr, "natssend-lint: -fix: fixed %s; %s without a fix remain:\n", plural(fixed, "finding"), plural(after.findings(), "finding"))
	}
	return report(&check1, after, code, stdout, stderr)
}

// printDiff prints the plan as a unified diff, file paths relative to the
// top of the git work tree they are in (where git apply resolves them),
// else to the current directory. The exit status is 1 when the diff is not
// empty, as diff's is.
func printDiff(plan *fixPlan, stdout, stderr io.Writer) int {
	for _, file := range plan.sortedFiles() {
		src, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "natssend-lint: -fix -diff: %v\n", err)
			return exitError
		}
		dst, err := fixed(src, plan.files[file])
		if err == nil {
			err = writeUnified(stdout, patchPath(file), string(src), string(dst))
		}
		if err != nil {
			fmt.Fprintf(stderr, "natssend-lint: -fix -diff: %v\n", err)
			return exitError
		}
	}
	if len(plan.files) > 0 {
		return exitError
	}
	return exitOK
}

// fixed returns src with the edits applied and then formatted, as go vet
// -fix writes it (its imports sorted, the added shim import among them),
// or unformatted when it does not parse, as go vet -fix leaves it.
func fixed(src []byte, edits []fixEdit) ([]byte, error) {
	for _, e := range edits {
		if e.Start < 0 || e.End < e.Start || e.End > len(src) {
			return nil, fmt.Errorf("%s: an edit at %d-%d is outside the file (%d bytes)", e.Filename, e.Start, e.End, len(src))
		}
	}
	dst := apply(src, edits)
	if b, err := format.Source(dst); err == nil {
		return b, nil
	}
	return dst, nil
}

// patchPath returns file relative to the top of its git work tree, or to
// the current directory when it is in none, slash-separated.
func patchPath(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return filepath.ToSlash(file)
	}
	base, err := os.Getwd()
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if _, e := os.Stat(filepath.Join(d, ".git")); e == nil {
			base, err = d, nil
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if err == nil {
		if rel, err := filepath.Rel(base, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(abs)
}

// shimMissing says why the module in the current directory cannot build
// the shim package and its dependencies, or "" when it can.
func shimMissing(o *options) string {
	args := []string{"list", "-e", "-deps"}
	if o.tags != "" {
		args = append(args, "-tags="+o.tags)
	}
	args = append(args, "-f", "{{with .Error}}{{.Err}}\n{{end}}", shimPkg)
	out, err := exec.Command("go", args...).CombinedOutput()
	msg := strings.TrimSpace(string(out))
	if err != nil && msg == "" {
		msg = err.Error()
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i] // the first reason is enough
	}
	// The go command's own remedy follows on the next line; its go get
	// cannot fetch natssend (see shimRemedy).
	return strings.TrimSuffix(msg, "; to add it:")
}

// shimRemedy returns what to run, and the lines to run, so that the
// module can build the shim. natssend is not on the Go module proxy, so
// go get cannot add it: a module that does not require it yet requires it
// from a clone, as README's "In your own module" says; one that does only
// needs its go.sum entries.
func shimRemedy() string {
	if exec.Command("go", "list", "-m", natssendModule).Run() == nil {
		return "Fix that first; for missing go.sum entries, run:\n\n\tgo mod tidy"
	}
	return "natssend is not on the Go module proxy yet, so go get cannot add it: require it from a clone of natssend " +
		"(README.md, \"In your own module\"), here one at ../natssend. Run first:\n\n" +
		"\tgo mod edit -require=" + natssendModule + "@" + unpublished + " -replace=" + natssendModule + "=../natssend\n" +
		"\tgo mod tidy"
}

// unpublished is the version a require of a replaced natssend names.
const unpublished = "v0.0.0-00010101000000-000000000000"

// plural returns "1 finding" or "n findings".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
