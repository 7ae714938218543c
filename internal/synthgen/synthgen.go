package synthgen

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"text/template"
)

// Options configures Generate.
type Options struct {
	// Module is the module path of the generated module; default
	// "synth.example/bench".
	Module string
	// Packages is the number of packages; default 340.
	Packages int
	// Units is the number of code units per package, each about 90 lines;
	// default 3 (about 100k lines for 340 packages).
	Units int
	// RealNATS makes the module require the real github.com/nats-io/nats.go
	// (RealNATSVersion) instead of the local stub, so that its dependency
	// graph is a real one. The go command then needs the module, and its
	// dependencies, in the module cache or from a proxy; GoSum, if set, is
	// written as the module's go.sum.
	RealNATS bool
	// Require lists further "path version" requirements of a RealNATS
	// module, to pin nats.go's own dependencies to versions already in the
	// module cache (see NATSDeps).
	Require []string
	// GoSum is the content of go.sum with RealNATS (the caller's own
	// go.sum is a good superset); the go command adds what is missing when
	// run with -mod=mod.
	GoSum []byte
	// Stdlib makes every package also import a few large standard-library
	// packages (net/http, crypto/tls, database/sql, encoding/json, ...), as
	// real services do: dependencies that cannot send.
	Stdlib bool
	// Plain is the number of packages without nats.go (m000, m001, ...,
	// each importing the one before): the main module's own code that the
	// NATS packages import (package i imports m(i mod Plain)) and that
	// natssend-lint type-checks from source for facts. Default 0.
	Plain int
	// Generated, if not 0, makes the module the generated-code shape
	// instead (gencode.go): one command, a single file using nats.go,
	// importing Generated packages of generated code without nats.go,
	// sqlc-like and oapi-codegen-like in turn, of GenEntities entities
	// each (default 22: about 3,000 lines a package). Packages, Units and
	// Plain are then ignored.
	Generated   int
	GenEntities int
}

// RealNATSVersion is the nats.go version a RealNATS module requires.
const RealNATSVersion = "v1.55.0"

// NATSDeps are the modules nats.go RealNATSVersion depends on, for
// Options.Require.
var NATSDeps = []string{
	"github.com/klauspost/compress",
	"github.com/nats-io/nkeys",
	"github.com/nats-io/nuid",
	"golang.org/x/crypto",
	"golang.org/x/sys",
}

// stdlibImports are the standard-library packages of Options.Stdlib, each
// with an expression that uses it.
var stdlibImports = []struct{ Path, Use string }{
	{"net/http", "http.StatusTeapot"},
	{"net/http/httputil", "httputil.ErrLineTooLong"},
	{"crypto/tls", "tls.VersionTLS13"},
	{"crypto/x509", "x509.ErrUnsupportedAlgorithm"},
	{"database/sql", "sql.ErrNoRows"},
	{"encoding/json", "json.Valid"},
	{"encoding/xml", "xml.Header"},
	{"html/template", "template.HTMLEscapeString"},
	{"compress/gzip", "gzip.BestSpeed"},
	{"log/slog", "slog.LevelInfo"},
	{"net/smtp", "smtp.PlainAuth"},
	{"go/parser", "parser.ParseComments"},
}

// Stats describes a generated module.
type Stats struct {
	Packages int // packages generated, not counting the nats.go stub
	Files    int // Go files generated, not counting the stub
	Lines    int // lines in those files
	// PlainLines are the lines of the packages without nats.go
	// (Options.Plain, or the generated packages of Options.Generated),
	// included in Lines.
	PlainLines int
}

func (o Options) withDefaults() Options {
	if o.Module == "" {
		o.Module = "synth.example/bench"
	}
	if o.Packages <= 0 {
		o.Packages = 340
	}
	if o.Units <= 0 {
		o.Units = 3
	}
	if o.GenEntities <= 0 {
		o.GenEntities = 22
	}
	return o
}

// Generate writes a synthetic module to dir, which must not exist or be
// empty: a go.mod that replaces github.com/nats-io/nats.go with a local stub
// (so the module builds offline) and the stub, or with Options.RealNATS a
// go.mod requiring the real nats.go, and the packages p000, p001, ...
// Package i imports packages i-1 and i/2, so facts flow through a deep
// import graph. Every package has raw sends, sends through wrappers of
// another package, retry loops, loops over items, closures, goroutines and
// connects, padded with ordinary code.
func Generate(dir string, opt Options) (Stats, error) {
	opt = opt.withDefaults()
	var st Stats
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return st, fmt.Errorf("synthgen: %s is not empty", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return st, err
	}
	write := func(name string, content []byte) error {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, content, 0o644)
	}
	gomod := fmt.Sprintf("module %s\n\ngo 1.26\n\nrequire github.com/nats-io/nats.go %s\n", opt.Module, RealNATSVersion)
	if opt.RealNATS {
		for _, r := range opt.Require {
			gomod += "require " + r + "\n"
		}
		if err := write("go.mod", []byte(gomod)); err != nil {
			return st, err
		}
		if len(opt.GoSum) > 0 {
			if err := write("go.sum", opt.GoSum); err != nil {
				return st, err
			}
		}
	} else {
		gomod += "\nreplace github.com/nats-io/nats.go => ./natsstub\n"
		if err := write("go.mod", []byte(gomod)); err != nil {
			return st, err
		}
		if err := write("natsstub/go.mod", []byte("module github.com/nats-io/nats.go\n\ngo 1.26\n")); err != nil {
			return st, err
		}
		if err := write("natsstub/nats.go", []byte(natsStub)); err != nil {
			return st, err
		}
	}
	// pkg writes one generated package and counts its lines.
	pkg := func(name string, source func(Options, int) ([]byte, error), i int) (int, error) {
		src, err := source(opt, i)
		if err != nil {
			return 0, err
		}
		if err := write(filepath.Join(name, filepath.Base(name)+".go"), src); err != nil {
			return 0, err
		}
		n := bytes.Count(src, []byte("\n"))
		st.Packages++
		st.Files++
		st.Lines += n
		return n, nil
	}
	if opt.Generated > 0 {
		for i := range opt.Generated {
			n, err := pkg(genName(i), genSource, i)
			if err != nil {
				return st, err
			}
			st.PlainLines += n
		}
		_, err := pkg("cmd/server", func(o Options, _ int) ([]byte, error) { return mainSource(o) }, 0)
		return st, err
	}
	for i := 0; i < opt.Plain; i++ {
		n, err := pkg(plainName(i), plainSource, i)
		if err != nil {
			return st, err
		}
		st.PlainLines += n
	}
	for i := 0; i < opt.Packages; i++ {
		if _, err := pkg(pkgName(i), packageSource, i); err != nil {
			return st, err
		}
	}
	return st, nil
}

func pkgName(i int) string { return fmt.Sprintf("p%03d", i) }

// unitData is the template input for one unit.
type unitData struct {
	N    int
	Pkg  string
	Deps []string // names of imported generated packages
}

var pkgTemplate = template.Must(template.New("pkg").Parse(`// Package {{.Pkg}} is generated by synthgen for the natssend-lint benchmark.
package {{.Pkg}}

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
{{range .Std}}
	"{{.Path}}"
{{- end}}
{{range .Deps}}
	"{{$.Module}}/{{.}}"
{{- end}}
{{if .Plain}}
	"{{$.Module}}/{{.Plain}}"
{{end}}
)

var errBusy = errors.New("{{.Pkg}}: busy")
{{range .Std}}
var _ = {{.Use}}
{{- end}}

// Notify sends a notification for this package.
func Notify(nc *nats.Conn, subject string, data []byte) error {
	if len(data) == 0 {
		return errBusy
	}
	return nc.Publish(subject, data)
}

// Connect connects for this package.
func Connect(url string) (*nats.Conn, error) {
	return nats.Connect(url, nats.Name("{{.Pkg}}"))
}
{{if .Plain}}
// natsStore is a {{.Plain}}.Store over Core NATS.
type natsStore struct{ nc *nats.Conn }

func (s natsStore) Put(ctx context.Context, key string, value []byte) error {
	return s.nc.Publish("{{.Pkg}}.put."+key, value)
}

func (s natsStore) Get(ctx context.Context, key string) ([]byte, error) {
	m, err := s.nc.RequestWithContext(ctx, "{{.Pkg}}.get."+key, nil)
	if err != nil {
		return nil, err
	}
	return m.Data, nil
}

// NewCache returns a cache publishing its writes: {{.Plain}}.Cache.Save
// retries them.
func NewCache(nc *nats.Conn) *{{.Plain}}.Cache { return {{.Plain}}.NewCache(natsStore{nc: nc}) }
{{end}}
{{range .Units}}{{$u := .}}
type record{{.N}} struct {
	ID    int
	Name  string
	Tags  map[string]string
	Items []string
}

func (r *record{{.N}}) key() string {
	var b strings.Builder
	b.WriteString(r.Name)
	for _, it := range r.Items {
		b.WriteString("/" + it)
	}
	return fmt.Sprintf("%d:%s", r.ID, b.String())
}

// Publish{{.N}} publishes every item, logging failures.
func Publish{{.N}}(nc *nats.Conn, r *record{{.N}}) int {
	failed := 0
	for i, it := range r.Items {
		if err := nc.Publish("{{$.Pkg}}.items", []byte(it)); err != nil {
			failed++
			continue
		}
		r.Tags[it] = fmt.Sprint(i)
	}
	return failed
}

// Retry{{.N}} retries a request until it works.
func Retry{{.N}}(ctx context.Context, nc *nats.Conn, r *record{{.N}}) (*nats.Msg, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		reply, err := nc.RequestWithContext(ctx, "{{$.Pkg}}.svc", []byte(r.key()))
		if err == nil {
			return reply, nil
		}
		lastErr = err
		time.Sleep(time.Duration(attempt) * time.Millisecond)
	}
	return nil, lastErr
}

// Handle{{.N}} replies from a closure and fans out in goroutines.
func Handle{{.N}}(nc *nats.Conn) error {
	_, err := nc.Subscribe("{{$.Pkg}}.h{{.N}}", func(m *nats.Msg) {
		switch {
		case len(m.Data) > 10:
			_ = m.Respond([]byte("long"))
		default:
			go func() { _ = m.Respond(m.Data) }()
		}
	})
	return err
}
{{range .Deps}}
// Forward{{$u.N}}{{.}} sends through another package's wrapper until it works.
func Forward{{$u.N}}{{.}}(nc *nats.Conn, data []byte) error {
	for i := 0; ; i++ {
		err := {{.}}.Notify(nc, "fwd", data)
		if err == nil || i > 2 {
			return err
		}
	}
}
{{end}}
func compute{{.N}}(xs []int) (sum, max int, names []string) {
	for i, x := range xs {
		sum += x
		if x > max {
			max = x
		}
		if i%3 == 0 {
			names = append(names, strings.Repeat("x", i%5))
		}
	}
	return sum, max, names
}
{{end}}`))

// packageSource returns the formatted source of package i.
func packageSource(opt Options, i int) ([]byte, error) {
	var deps []string
	if i > 0 {
		deps = append(deps, pkgName(i-1))
		if j := i / 2; j != i-1 {
			deps = append(deps, pkgName(j))
		}
	}
	units := make([]unitData, opt.Units)
	for u := range units {
		units[u] = unitData{N: u, Pkg: pkgName(i), Deps: deps}
	}
	var buf bytes.Buffer
	var std []struct{ Path, Use string }
	if opt.Stdlib {
		std = stdlibImports
	}
	var plain string
	if opt.Plain > 0 {
		plain = plainName(i % opt.Plain)
	}
	err := pkgTemplate.Execute(&buf, struct {
		Pkg, Module, Plain string
		Deps               []string
		Std                []struct{ Path, Use string }
		Units              []unitData
	}{pkgName(i), opt.Module, plain, deps, std, units})
	if err != nil {
		return nil, err
	}
	src, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("synthgen: package %d: %v", i, err)
	}
	return src, nil
}
