package claimcheck_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/tools/go/packages"

	"github.com/natssend/natssend/claimcheck"
)

// The JetStream helpers refuse an invalid option before anything is
// consumed; a nil option is ignored.
func TestJetStreamOptionsChecked(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	_, js := connect(t, s.URL())
	st := newStore(t, js)
	if _, err := js.CreateStream(ctxT(t), jetstream.StreamConfig{Name: "OPTS", Subjects: []string{"opts"}}); err != nil {
		t.Fatal(err)
	}
	cons, err := js.CreateConsumer(ctxT(t), "OPTS", jetstream.ConsumerConfig{AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	noop := func(jetstream.Msg) {}
	onErr := func(jetstream.Msg, error) {}
	if _, err := st.Consume(cons, noop, onErr, claimcheck.NakDelay(0)); !errors.Is(err, claimcheck.ErrInvalidOption) {
		t.Errorf("Consume with NakDelay(0): %v", err)
	}
	if _, err := st.Messages(cons, claimcheck.NakDelay(-time.Second)); !errors.Is(err, claimcheck.ErrInvalidOption) {
		t.Errorf("Messages with NakDelay(-1s): %v", err)
	}
	cc, err := st.Consume(cons, noop, onErr, nil, claimcheck.DeleteAfterRead(), claimcheck.NakDelay(time.Second), claimcheck.PullConsumeOpts(jetstream.PullMaxMessages(2)))
	if err != nil {
		t.Fatalf("Consume with valid and nil options: %v", err)
	}
	cc.Stop()
	ms, err := st.Messages(cons, nil, claimcheck.DeleteAfterRead(), claimcheck.PullMessagesOpts(jetstream.PullMaxMessages(2)))
	if err != nil {
		t.Fatalf("Messages with valid and nil options: %v", err)
	}
	ms.Stop()
}

// An option given to a helper that would ignore it does not compile, as
// jetstream's per-call option types make it (PullConsumeOpt,
// PullMessagesOpt).
func TestIgnoredOptionsDoNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks with the go command")
	}
	t.Parallel()
	cases := []string{
		`st.Subscribe("s", h, e, claimcheck.NakDelay(time.Second))`,
		`st.Messages(c, claimcheck.PullConsumeOpts())`,
		`st.Consume(c, jh, je, claimcheck.PullMessagesOpts())`,
		`st.QueueSubscribe("s", "q", h, e, claimcheck.PullConsumeOpts())`,
	}
	// The control: every helper with the options it takes compiles.
	valid := `st.Subscribe("s", h, e, claimcheck.DeleteAfterRead())
	_, _ = st.Consume(c, jh, je, claimcheck.DeleteAfterRead(), claimcheck.NakDelay(time.Second), claimcheck.PullConsumeOpts())
	_, _ = st.Messages(c, claimcheck.DeleteAfterRead(), claimcheck.NakDelay(time.Second), claimcheck.PullMessagesOpts())`
	var b strings.Builder
	b.WriteString(`package misuse

import (
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natssend/natssend/claimcheck"
)

var _ = time.Second
`)
	for i, call := range append([]string{valid}, cases...) {
		fmt.Fprintf(&b, "\nfunc f%d(st *claimcheck.Store, c jetstream.Consumer, h func(*nats.Msg), e func(*nats.Msg, error), jh func(jetstream.Msg), je func(jetstream.Msg, error)) {\n\t_, _ = %s // case %d\n}\n", i, call, i)
	}
	src := b.String()
	srcLines := strings.Split(src, "\n")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(wd, "testdata_misuse_overlay", "misuse.go")
	cfg := &packages.Config{Mode: packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo, Dir: wd,
		Overlay: map[string][]byte{file: []byte(src)}}
	pkgs, err := packages.Load(cfg, "file="+file)
	if err != nil {
		t.Fatal(err)
	}
	bad := map[int]bool{}
	at := regexp.MustCompile(`misuse\.go:(\d+):\d+`)
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			// The go command reports the type errors of the overlay file
			// in one error, each as "misuse.go:line:col: ..."; the line
			// names its case.
			for _, m := range at.FindAllStringSubmatch(e.Pos+"\n"+e.Msg, -1) {
				n, _ := strconv.Atoi(m[1])
				k := -1
				if n >= 1 && n <= len(srcLines) {
					if _, c, ok := strings.Cut(srcLines[n-1], "// case "); ok {
						k, _ = strconv.Atoi(c)
					}
				}
				if k < 1 {
					t.Errorf("unexpected error at line %d: %s", n, e.Msg)
					continue
				}
				bad[k] = true
			}
		}
	})
	for k := 1; k <= len(cases); k++ {
		if !bad[k] {
			t.Errorf("compiled, want a type error: %s", cases[k-1])
		}
	}
}
