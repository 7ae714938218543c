package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/natssend/natssend/analyzer"
)

// options are the standalone driver's settings.
type options struct {
	json    bool     // -json: the findings as JSON on stdout
	fix     bool     // -fix: apply the first fix of each finding
	diff    bool     // -diff: with -fix, print the fixes as a diff instead
	tests   bool     // -test: report findings in test files (default true)
	vet     bool     // -vet: run through go vet -vettool (cached per package)
	context int      // -c: lines of context around each finding (-1: none)
	url     bool     // -url: the documentation link after every finding, not only a category's first
	tags    string   // -tags: build tags, passed to the go command
	cpuprof string   // -cpuprofile: write a CPU profile of the in-process run
	memprof string   // -memprofile: write a heap profile after the in-process run
	tool    []string // the analyzer's flags as given, passed to the vet tool
	pkgs    []string // package patterns
}

// errUsage is returned by parseFlags for a command line it cannot run; the
// reason has already been printed.
var errUsage = errors.New("usage")

// parseFlags parses the standalone command line. The analyzer's flags are
// checked here (an unknown category fails before the go command runs) and
// forwarded, as given, to every run of the vet tool.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{tests: true, context: -1}
	fs := flag.NewFlagSet("natssend-lint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.json, "json", false, "print the findings as JSON on stdout (exit status 3 if any, as for text)")
	fs.BoolVar(&o.fix, "fix", false, "apply the first suggested fix of each finding")
	fs.BoolVar(&o.diff, "diff", false, "with -fix, print the fixes as a unified diff instead of applying them")
	fs.BoolVar(&o.tests, "test", true, "also load and check the packages' tests")
	fs.BoolVar(&o.vet, "vet", false, "check through go vet -vettool, which caches the results per package")
	fs.IntVar(&o.context, "c", -1, "show this many lines of context around each finding")
	fs.BoolVar(&o.url, "url", false, "print the documentation link after every finding (default: after the first of each category)")
	fs.StringVar(&o.tags, "tags", "", "comma-separated build tags, for the go command")
	fs.StringVar(&o.cpuprof, "cpuprofile", "", "write a CPU profile to this file (not with -vet or -fix)")
	fs.StringVar(&o.memprof, "memprofile", "", "write a heap profile to this file after the analysis (not with -vet or -fix)")
	analyzer.Analyzer.Flags.VisitAll(func(f *flag.Flag) {
		tf := &toolFlag{Value: f.Value, name: f.Name, out: &o.tool}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			fs.Var(boolToolFlag{tf}, f.Name, f.Usage)
		} else {
			fs.Var(tf, f.Name, f.Usage)
		}
	})
	fs.Usage = func() {
		paras := strings.Split(analyzer.Analyzer.Doc, "\n\n")
		fmt.Fprintf(stderr, "natssend-lint: %s\n\nUsage: natssend-lint [-flag] package...\n       natssend-lint help [category...]\n\n", paras[0])
		fmt.Fprintln(stderr, strings.Join(paras[1:], "\n\n"))
		fmt.Fprintln(stderr, "\nEach finding's category is documented at "+checksURL+"<category>;\nthe text output links the first finding of each category (-url: every one),\n-json gives each finding its \"url\".")
		fmt.Fprintln(stderr, "\nExit status (text and -json alike): 3 when there are findings (also after\n-fix, when some remain), 1 on errors, 2 on usage errors, 0 otherwise.\nSee go doc github.com/natssend/natssend/cmd/natssend-lint.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, flag.ErrHelp
		}
		return nil, errUsage
	}
	o.pkgs = fs.Args()
	switch {
	case len(o.pkgs) == 0:
		fs.Usage()
		return nil, errUsage
	case o.diff && !o.fix:
		fmt.Fprintln(stderr, "natssend-lint: -diff requires -fix")
		return nil, errUsage
	case o.fix && o.json:
		fmt.Fprintln(stderr, "natssend-lint: -fix and -json cannot be used together")
		return nil, errUsage
	}
	return o, nil
}

// toolFlag is one of the analyzer's flags: Set checks the value with the
// analyzer's own flag and records it for the vet tool.
type toolFlag struct {
	flag.Value
	name string
	out  *[]string
}

// String returns the analyzer flag's value ("" for the zero toolFlag that
// flag.PrintDefaults makes).
func (f *toolFlag) String() string {
	if f == nil || f.Value == nil {
		return ""
	}
	return f.Value.String()
}

func (f *toolFlag) Set(s string) error {
	if err := f.Value.Set(s); err != nil {
		return err
	}
	*f.out = append(*f.out, "-"+f.name+"="+s)
	return nil
}

// boolToolFlag is a toolFlag for a boolean flag (-skip-tests, -audit).
type boolToolFlag struct{ *toolFlag }

func (boolToolFlag) IsBoolFlag() bool { return true }
