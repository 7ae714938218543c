package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/natssend/natssend/internal/synthgen"
)

// generateShape writes the generated-code shape (-generated) with g
// generated packages and the real nats.go, its module graph resolved.
func generateShape(work string, g int) target {
	dir := filepath.Join(work, fmt.Sprintf("generated%d", g))
	opt := realNATS(fmt.Sprintf("synth.example/generated%d", g))
	opt.Generated = g
	st, err := synthgen.Generate(dir, opt)
	if err != nil {
		fatalf("%v", err)
	}
	tidy(dir)
	return target{name: fmt.Sprintf("generated code, %d packages", g), dir: dir, stats: &st}
}

// realNATS returns the options of a generated module named module with
// the real nats.go, pinned to this module's versions of nats.go's
// dependencies (all in the module cache already) and its go.sum.
func realNATS(module string) synthgen.Options {
	sum, err := os.ReadFile(filepath.Join(filepath.Dir(goEnv("GOMOD")), "go.sum"))
	if err != nil {
		fatalf("%v", err)
	}
	out, err := exec.Command("go", append([]string{"list", "-m", "-f", "{{.Path}} {{.Version}}"}, synthgen.NATSDeps...)...).Output()
	if err != nil {
		fatalf("go list -m: %v", err)
	}
	return synthgen.Options{
		Module:   module,
		RealNATS: true,
		Require:  strings.Split(strings.TrimSpace(string(out)), "\n"),
		GoSum:    sum,
	}
}

// tidy resolves the module graph of dir once (go.sum), outside the
// measurements.
func tidy(dir string) {
	cmd := exec.Command("go", "mod", "tidy")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if b, err := cmd.CombinedOutput(); err != nil {
		fatalf("go mod tidy in %s: %v\n%s", dir, err, b)
	}
}
