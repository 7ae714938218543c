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
	sum, err := os.ReadFile(filepath.Join(filepath.Dir(goEnv("GOMOD")), "go.sum"))
	if err != nil {
		fatalf("%v", err)
	}
	out, err := exec.Command("go", append([]string{"list", "-m", "-f", "{{.Path}} {{.Version}}"}, synthgen.NATSDeps...)...).Output()
	if err != nil {
		fatalf("go list -m: %v", err)
	}
	st, err := synthgen.Generate(dir, synthgen.Options{
		Module:    fmt.Sprintf("synth.example/generated%d", g),
		Generated: g,
		RealNATS:  true,
		Require:   strings.Split(strings.TrimSpace(string(out)), "\n"),
		GoSum:     sum,
	})
	if err != nil {
		fatalf("%v", err)
	}
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if b, err := tidy.CombinedOutput(); err != nil {
		fatalf("go mod tidy in %s: %v\n%s", dir, err, b)
	}
	return target{name: fmt.Sprintf("generated code, %d packages", g), dir: dir, stats: &st}
}
