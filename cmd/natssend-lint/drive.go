package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// Exit statuses of the standalone driver, as singlechecker's.
const (
	exitOK       = 0
	exitError    = 1 // the go command, a package or the analyzer failed
	exitUsage    = 2
	exitFindings = 3
)

// drive runs natssend-lint standalone: it has the go command run this very
// executable as its vet tool over the named packages (go vet -vettool),
// which loads each package's dependencies from export data, passes the
// analyzer's facts between packages in vet's own files and caches every
// result per package. It then prints the findings, de-duplicated and
// sorted, as text on stderr or as JSON on stdout.
func drive(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		return exitUsage
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "natssend-lint: cannot find its own executable for go vet -vettool: %v\n", err)
		return exitError
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintf(stderr, "natssend-lint: the go command is needed to load packages: %v\n", err)
		return exitError
	}
	cmd := exec.Command(goCmd, vetArgs(o, self)...)
	cmd.Stdin = nil
	cmd.Stderr = stderr // build and type errors, as go vet prints them
	if o.fix {
		// go vet -fix applies the fixes itself once every package is
		// done (or prints them with -diff).
		cmd.Stdout = stdout
		if err := cmd.Run(); err != nil {
			return goFailed(stderr, err)
		}
		return exitOK
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	runErr := cmd.Run()
	if runErr != nil && !isExit(runErr) {
		return goFailed(stderr, runErr)
	}
	tree, err := readTree(&out)
	if err != nil {
		fmt.Fprintf(stderr, "natssend-lint: reading go vet -json output: %v\n", err)
		return exitError
	}
	res, err := tree.results(o.tests)
	if err != nil {
		fmt.Fprintf(stderr, "natssend-lint: %v\n", err)
		return exitError
	}
	code := exitOK
	if o.json {
		if err := res.printJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "natssend-lint: %v\n", err)
			return exitError
		}
	} else {
		for _, e := range res.errors {
			fmt.Fprintf(stderr, "natssend-lint: %s\n", e)
		}
		res.printText(stderr, o.context)
		if len(res.diags) > 0 {
			code = exitFindings
		}
		if len(res.errors) > 0 {
			code = exitError
		}
	}
	if runErr != nil {
		code = exitError
	}
	return code
}

// vetArgs returns the go command's arguments for o, with self as the vet
// tool. The analyzer's flags, and whether test files are reported, do not
// change the vet tool's flags outside -fix: every run with the same flags
// shares the go command's cached results, dependencies' facts included.
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
