package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"

	"github.com/natssend/natssend/analyzer"
)

// Exit statuses of the standalone driver, as singlechecker's.
const (
	exitOK       = 0
	exitError    = 1 // the go command, a package or the analyzer failed
	exitUsage    = 2
	exitFindings = 3
)

// driverEnv is set in the go command's environment by drive, so that the
// vet tool processes it starts can never start go vet again.
const driverEnv = "NATSSEND_LINT_DRIVER"

// drive runs natssend-lint standalone and returns its exit status. It
// loads and analyzes the packages in this process (see load), or, with
// -vet or -fix, has the go command run this very executable as its vet
// tool (go vet -vettool), which caches every result per package. Either
// way it prints the findings, de-duplicated and sorted, as text on stderr
// or as JSON on stdout.
func drive(args []string, stdout, stderr io.Writer) int {
	if firstArg(args) == "help" {
		return help(args, stdout, stderr)
	}
	o, err := parseFlags(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		return exitUsage
	}
	if os.Getenv(driverEnv) != "" {
		// The go command runs this executable only with the vet tool
		// protocol's arguments; anything else would start go vet again.
		fmt.Fprintf(stderr, "natssend-lint: started by go vet with unexpected arguments %q\n", args)
		return exitError
	}
	if o.fix {
		return fix(o, stdout, stderr)
	}
	res, code := check(o, stdout, stderr)
	if res == nil {
		return code
	}
	return report(o, res, code, stdout, stderr)
}

// check runs the analysis o asks for (with -fix -diff, go vet prints the
// fixes and check returns nil results) and returns its results, and
// exitError if errors were already printed.
func check(o *options, stdout, stderr io.Writer) (*results, int) {
	var (
		tree   jsonTree
		urls   map[string]string
		failed bool // errors already printed
		err    error
	)
	if o.fix || o.vet {
		var code int
		if tree, code = runVet(o, stdout, stderr); tree == nil {
			return nil, code
		}
		failed = code != exitOK
	} else if tree, urls, failed, err = runHere(o, stderr); err != nil {
		fmt.Fprintf(stderr, "natssend-lint: %v\n", err)
		return nil, exitError
	}
	res, err := tree.results(o.tests, urls)
	if err != nil {
		fmt.Fprintf(stderr, "natssend-lint: %v\n", err)
		return nil, exitError
	}
	if failed {
		return res, exitError
	}
	return res, exitOK
}

// report prints res as o asks and returns the exit status, the same for
// text and -json: code if it is an error, exitError when a package
// failed, exitFindings when there are findings (not counting the entries
// of -audit), else exitOK.
func report(o *options, res *results, code int, stdout, stderr io.Writer) int {
	if o.json {
		// A package's error is in the JSON tree ({"error": ...}).
		if err := res.printJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "natssend-lint: %v\n", err)
			return exitError
		}
	} else {
		for _, e := range res.errors {
			fmt.Fprintf(stderr, "natssend-lint: %s\n", e)
		}
		res.printText(stderr, o.context, o.url)
	}
	switch {
	case code != exitOK:
		return code
	case len(res.errors) > 0:
		return exitError
	case res.findings() > 0:
		return exitFindings
	}
	return exitOK
}

// runHere loads and analyzes the packages in this process and returns the
// results as a JSON tree, the Diagnostic.URL of each finding (by urlKey),
// and whether a package had errors (printed on stderr, as go/packages
// prints them).
func runHere(o *options, stderr io.Writer) (jsonTree, map[string]string, bool, error) {
	cfg := &packages.Config{Tests: o.tests}
	if o.tags != "" {
		cfg.BuildFlags = []string{"-tags=" + o.tags}
	}
	if o.cpuprof != "" {
		stop, err := startCPUProfile(o.cpuprof)
		if err != nil {
			return nil, nil, false, err
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintf(stderr, "natssend-lint: %v\n", err)
			}
		}()
	}
	if os.Getenv("GOGC") == "" {
		// A heap goal of 1.75 times the live heap rather than 2: the
		// run drops each package's syntax once it is analyzed, so the
		// live heap stays under the fact-free floor's on most modules,
		// but on natscli, whose largest package is checked twice (with
		// and without its tests) while jsm.go's packages are checked
		// for their facts, the default goal would bring the peak to
		// 1.22x the floor's; 75 keeps it at 1.18x for 3% more time
		// (BENCHMARKS.md, "The driver's own run").
		debug.SetGCPercent(75)
	}
	tree, urls, failed, err := analyzeHere(cfg, o.pkgs, analyzer.Analyzer, stderr)
	if err != nil {
		return nil, nil, failed, err
	}
	if o.memprof != "" {
		if err := writeHeapProfile(o.memprof); err != nil {
			return nil, nil, failed, err
		}
	}
	return tree, urls, failed, nil
}

// analyzeHere loads the packages matching patterns (see load) and runs a
// on them while they are type-checked (see run), and returns the results
// as a JSON tree, the Diagnostic.URL of each finding (by urlKey), and
// whether a package had errors (printed on w, as go/packages prints
// them).
func analyzeHere(cfg *packages.Config, patterns []string, a *analysis.Analyzer, w io.Writer) (jsonTree, map[string]string, bool, error) {
	l, roots, err := newLoader(cfg, patterns, needsAllFacts(a), true)
	if err != nil {
		return nil, nil, false, err
	}
	r, err := l.newRun(testedOnce(roots), []*analysis.Analyzer{a})
	if err != nil {
		return nil, nil, false, err
	}
	l.check(r)
	failed := printErrors(w, l.pkgs(roots)) > 0
	tree, urls, err := r.tree()
	return tree, urls, failed, err
}

// startCPUProfile starts a CPU profile written to the file name; stop ends
// it and closes the file.
func startCPUProfile(name string) (stop func() error, err error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

func writeHeapProfile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

// testedOnce drops from roots each package whose test variant (the
// package compiled with its _test.go files, "p [p.test]") is also in
// roots: the variant has all of its files, so the analyzer is run once per
// file, as go vet runs it. The package itself is still analyzed, for its
// facts, when another of roots imports it.
func testedOnce(roots []*node) []*node {
	ids := make(map[string]bool, len(roots))
	for _, n := range roots {
		ids[n.p.ID] = true
	}
	var out []*node
	for _, n := range roots {
		if !ids[n.p.ID+" ["+n.p.PkgPath+".test]"] {
			out = append(out, n)
		}
	}
	return out
}

// printErrors prints the errors of pkgs and of the source packages they
// import, once each, and returns how many there were.
func printErrors(w io.Writer, pkgs []*packages.Package) int {
	n := 0
	seen := make(map[string]bool)
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			if s := e.Error(); !seen[s] {
				seen[s] = true
				fmt.Fprintln(w, s)
				n++
			}
		}
	})
	return n
}

// runVet runs go vet -vettool=<this executable>. With -fix the go command
// applies (or, with -diff, prints) the fixes and runVet returns a nil tree
// and the exit status; otherwise it returns the merged JSON trees of the
// vetted packages and exitError if the go command failed (its messages,
// build and type errors, are on stderr).
func runVet(o *options, stdout, stderr io.Writer) (jsonTree, int) {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "natssend-lint: cannot find its own executable for go vet -vettool: %v\n", err)
		return nil, exitError
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintf(stderr, "natssend-lint: -vet and -fix need the go command: %v\n", err)
		return nil, exitError
	}
	cmd := exec.Command(goCmd, vetArgs(o, self)...)
	cmd.Env = append(os.Environ(), driverEnv+"=1")
	cmd.Stderr = stderr
	if o.fix {
		// go vet -fix applies the fixes itself once every package is
		// done (or prints them with -diff).
		cmd.Stdout = stdout
		if err := cmd.Run(); err != nil {
			return nil, goFailed(stderr, err)
		}
		return nil, exitOK
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	runErr := cmd.Run()
	if runErr != nil && !isExit(runErr) {
		return nil, goFailed(stderr, runErr)
	}
	tree, err := readTree(&out)
	if err != nil {
		fmt.Fprintf(stderr, "natssend-lint: reading go vet -json output: %v\n", err)
		return nil, exitError
	}
	if runErr != nil {
		return tree, exitError
	}
	return tree, exitOK
}

// vetArgs returns the go command's arguments for o, with self as the vet
// tool. The analyzer's flags are passed as given, and are part of the go
// command's cache key; -test, -json and -c are not passed (the driver
// filters and prints), so that runs differing only in them share the
// cached results, dependencies' facts included.
func vetArgs(o *options, self string) []string {
	args := []string{"vet", "-vettool=" + self}
	if o.tags != "" {
		args = append(args, "-tags="+o.tags)
	}
	if o.fix {
		args = append(args, "-fix")
		if o.diff {
			args = append(args, "-diff")
		}
	} else {
		args = append(args, "-json")
	}
	args = append(args, o.tool...)
	if o.fix && !o.tests {
		// Fixes are applied by the go command, which cannot be told to
		// leave test files alone: have the analyzer report nothing there.
		args = append(args, "-skip-tests")
	}
	args = append(args, "--")
	return append(args, o.pkgs...)
}

func isExit(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit)
}

// goFailed reports a go command that did not succeed (its own messages are
// already on stderr) and returns the exit status.
func goFailed(stderr io.Writer, err error) int {
	if !isExit(err) {
		fmt.Fprintf(stderr, "natssend-lint: running go vet: %v\n", err)
	}
	return exitError
}
