// Command synthbench compares natssend-lint with a no-op analyzer over a
// synthetic module (see package synthgen): wall time and peak RSS of each,
// over several runs, after a warm-up run of each.
//
// Usage:
//
//	go run ./internal/synthgen/cmd/synthbench [-runs 5] [-packages 340] [-dir path] [-keep]
//
// Two floors are measured: "noop" loads only the module's packages from
// source (dependencies from export data), as a fact-free analyzer does;
// "noop+facts" declares a fact type, which makes the driver load every
// dependency from source, as it must for any analyzer with facts.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/natssend/natssend/internal/synthgen"
)

func main() {
	runs := flag.Int("runs", 5, "measured runs of each command")
	pkgs := flag.Int("packages", 0, "packages to generate (0: synthgen default)")
	dir := flag.String("dir", "", "directory for the generated module (default: a temporary directory)")
	keep := flag.Bool("keep", false, "keep the generated module and binaries")
	flag.Parse()
	log.SetFlags(0)

	work, err := os.MkdirTemp("", "synthbench")
	if err != nil {
		log.Fatal(err)
	}
	if !*keep {
		defer func() { _ = os.RemoveAll(work) }()
	}
	mod := *dir
	if mod == "" {
		mod = filepath.Join(work, "mod")
	}
	st, err := synthgen.Generate(mod, synthgen.Options{Packages: *pkgs})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("module: %d packages, %d lines in %s\n", st.Packages, st.Lines, mod)

	lint := filepath.Join(work, "natssend-lint")
	noop := filepath.Join(work, "noop")
	build(lint, "github.com/natssend/natssend/cmd/natssend-lint")
	build(noop, "github.com/natssend/natssend/internal/synthgen/noop")

	cmds := []struct {
		name string
		bin  string
		env  []string
	}{
		{"noop", noop, nil},
		{"noop+facts", noop, []string{"NATSSEND_NOOP_FACTS=1"}},
		{"natssend-lint", lint, nil},
	}
	results := make(map[string][]sample)
	for _, c := range cmds { // warm-up: go list and build caches
		measure(mod, c.bin, c.env)
	}
	for i := 0; i < *runs; i++ {
		for _, c := range cmds {
			results[c.name] = append(results[c.name], measure(mod, c.bin, c.env))
		}
	}
	fmt.Printf("%-14s %12s %12s %14s\n", "command", "wall (med)", "wall (min)", "max RSS (med)")
	med := make(map[string]sample)
	for _, c := range cmds {
		s := results[c.name]
		m := median(s)
		med[c.name] = m
		fmt.Printf("%-14s %12s %12s %11.0f MiB\n", c.name, m.wall.Round(time.Millisecond), minWall(s).Round(time.Millisecond), float64(m.rssKiB)/1024)
	}
	for _, floor := range []string{"noop", "noop+facts"} {
		l, f := med["natssend-lint"], med[floor]
		fmt.Printf("natssend-lint / %-10s  time %.2fx  memory %.2fx\n", floor, l.wall.Seconds()/f.wall.Seconds(), float64(l.rssKiB)/float64(f.rssKiB))
	}
}

type sample struct {
	wall   time.Duration
	rssKiB int64
}

func build(out, pkg string) {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("go build %s: %v", pkg, err)
	}
}

// measure runs bin ./... in dir and returns its wall time and peak RSS.
// Exit status 3 (findings) is expected from natssend-lint.
func measure(dir, bin string, env []string) sample {
	cmd := exec.Command(bin, "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	cmd.Env = append(cmd.Env, env...)
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() == 3 {
		err = nil
	}
	if err != nil {
		log.Fatalf("%s ./...: %v", bin, err)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss) // KiB on Linux
	}
	return sample{wall, rss}
}

func median(s []sample) sample {
	w := make([]time.Duration, len(s))
	r := make([]int64, len(s))
	for i, x := range s {
		w[i], r[i] = x.wall, x.rssKiB
	}
	slices.Sort(w)
	slices.Sort(r)
	return sample{w[len(w)/2], r[len(r)/2]}
}

func minWall(s []sample) time.Duration {
	m := s[0].wall
	for _, x := range s[1:] {
		m = min(m, x.wall)
	}
	return m
}
