package shim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestIgnoredOptionDoesNotCompile type-checks calls with an option the
// call would ignore and checks that each is refused by the compiler,
// while the same calls with the options they honour type-check.
func TestIgnoredOptionDoesNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	const head = `package probe

import (
	"context"
	"time"

	"github.com/natssend/natssend/shim"
)

func probe(ctx context.Context, c *shim.Client) {
`
	// One package per body, all type-checked by one packages.Load (one go
	// list), each package's errors its own.
	dir := t.TempDir()
	mod := "module probe\n\ngo 1.26\n\nrequire github.com/natssend/natssend v0.0.0\n\nreplace github.com/natssend/natssend => " + filepath.Dir(wd) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "probe.go"), []byte(head+body+"\n}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	check := func() map[string][]packages.Error {
		t.Helper()
		cfg := &packages.Config{
			Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo,
			Dir:  dir,
			Env:  append(os.Environ(), "GOFLAGS=-mod=mod", "GOSUMDB=off", "GOPROXY=off"),
		}
		pkgs, err := packages.Load(cfg, "./...")
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		errs := map[string][]packages.Error{}
		for _, p := range pkgs {
			errs[p.PkgPath] = p.Errors
		}
		return errs
	}
	ok := `_, _ = c.Request(ctx, "s", nil, shim.Timeout(time.Second), shim.OperationID("id"), shim.Attempts(2), shim.AttemptTimeout(time.Second))
	_, _ = c.RequestStream(ctx, "s", nil, shim.Timeout(time.Second), shim.OperationID("id"), shim.Attempts(2), shim.StreamWindow(1), shim.StreamIdle(time.Second))
	_ = c.RequestMany(ctx, "s", nil, shim.Timeout(time.Second), shim.OperationID("id"), shim.MaxReplies(1), shim.StallTimeout(time.Second), shim.Sentinel(shim.EmptyReply))`
	bad := []string{
		`_, _ = c.Request(ctx, "s", nil, shim.StreamWindow(1))`,
		`_, _ = c.Request(ctx, "s", nil, shim.MaxReplies(1))`,
		`_, _ = c.RequestStream(ctx, "s", nil, shim.Sentinel(shim.EmptyReply))`,
		`_ = c.RequestMany(ctx, "s", nil, shim.Attempts(2))`,
		`_ = c.RequestMany(ctx, "s", nil, shim.StreamIdle(time.Second))`,
	}
	write("ok", ok)
	for i, body := range bad {
		write(fmt.Sprintf("bad%d", i), body)
	}
	got := check()
	if len(got) != 1+len(bad) {
		t.Fatalf("loaded %d packages, want %d: %v", len(got), 1+len(bad), got)
	}
	if errs := got["probe/ok"]; len(errs) != 0 {
		t.Fatalf("the calls with the options they honour do not type-check: %v", errs)
	}
	for i, body := range bad {
		errs := got[fmt.Sprintf("probe/bad%d", i)]
		if len(errs) == 0 || !strings.Contains(errs[0].Msg, "does not implement") {
			t.Errorf("%s: type-checks (%v), want it refused", body, errs)
		}
	}
}
