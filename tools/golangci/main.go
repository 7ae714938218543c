package main

// This file follows cmd/golangci-lint/main.go of golangci-lint v2.15.0. The
// only differences are the blank import of the natssend plugin (what
// `golangci-lint custom` puts in plugins.go) and the version, which is taken
// from the golangci-lint dependency because this module is the main module.

import (
	"cmp"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/golangci/golangci-lint/v2/pkg/commands"
	"github.com/golangci/golangci-lint/v2/pkg/exitcodes"

	_ "github.com/natssend/natssend/plugin" // registers the natssend module plugin
)

// golangciModule is the module path of golangci-lint, whose version this
// binary reports.
const golangciModule = "github.com/golangci/golangci-lint/v2"

var (
	goVersion = "unknown"

	// May be set with -ldflags "-X main.version=... -X main.date=...", as
	// golangci-lint's release build and `golangci-lint custom` do.
	version = "unknown"
	commit  = "?"
	date    = ""
)

func main() {
	info := createBuildInfo()

	if err := commands.Execute(info); err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "The command is terminated due to an error: %v\n", err)
		os.Exit(exitcodes.Failure)
	}
}

func createBuildInfo() commands.BuildInfo {
	info := commands.BuildInfo{
		Commit:    commit,
		Version:   version,
		GoVersion: goVersion,
		Date:      date,
	}

	buildInfo, available := debug.ReadBuildInfo()
	if !available {
		return info
	}

	info.GoVersion = buildInfo.GoVersion

	if date != "" {
		return info
	}

	info.Version = customVersion(buildInfo)

	var revision string
	var modified string
	for _, setting := range buildInfo.Settings {
		// The `vcs.xxx` information is only available with `go build`
		// and -buildvcs not false.
		switch setting.Key {
		case "vcs.time":
			info.Date = setting.Value
		case "vcs.revision":
			revision = setting.Value
		case "vcs.modified":
			modified = setting.Value
		}
	}

	info.Date = cmp.Or(info.Date, "(unknown)")

	info.Commit = fmt.Sprintf("(natssend %s, modified: %s)",
		cmp.Or(revision, "unknown"), cmp.Or(modified, "?"))

	return info
}

// customVersion returns the version of the golangci-lint dependency without
// its "v", suffixed with "-custom-natssend" the way `golangci-lint custom`
// suffixes its builds with "-custom-gcl-<hash>".
func customVersion(buildInfo *debug.BuildInfo) string {
	for _, dep := range buildInfo.Deps {
		if dep.Path != golangciModule {
			continue
		}
		if dep.Replace != nil {
			dep = dep.Replace
		}
		return strings.TrimPrefix(dep.Version, "v") + "-custom-natssend"
	}
	return version
}
