package natstest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// DefaultUser is the user that URL connects as. It belongs to the account
// named DefaultAccount, which has JetStream enabled when the server does.
const (
	DefaultUser     = "app"
	DefaultPassword = "app"
	DefaultAccount  = "APP"
)

// Account describes an extra account with one user of its own.
type Account struct {
	Name       string
	User       string
	Password   string
	MaxPayload int32 // 0 means no account limit
	// Extra is more of the account's configuration, as server
	// configuration text: exports and imports, say
	// `exports: [ { service: "svc.>" } ]`.
	Extra string
}

type config struct {
	maxPayload int32
	jetstream  bool
	accounts   []Account
	logs       bool
	users      []User    // more users of DefaultAccount
	rawUsers   []rawUser // more users of DefaultAccount, as configuration text
	domain     string    // JetStream domain
	leafListen int       // a port to accept leafnode connections on
	leafRemote string    // a hub's leafnode URL to connect to
	leafDeny   []string  // subjects kept off the leafnode link (LeafDeny)
}

// Option configures a test server.
type Option func(*config)

// MaxPayload sets the server-wide max_payload.
func MaxPayload(n int32) Option { return func(c *config) { c.maxPayload = n } }

// JetStream enables JetStream with its store in a temporary directory.
func JetStream() Option { return func(c *config) { c.jetstream = true } }

// WithAccount adds an account with its own user and, when a.MaxPayload > 0,
// its own max_payload limit.
func WithAccount(a Account) Option {
	return func(c *config) { c.accounts = append(c.accounts, a) }
}

// Logs sends the server's log to the test log (noisy; for debugging).
func Logs() Option { return func(c *config) { c.logs = true } }

// Server is a running in-process nats-server.
type Server struct {
	tb    testing.TB
	srv   *server.Server
	host  string
	port  int
	dir   string
	conf  config
	users map[string]string
	node  *node // set for a member of a Cluster
}

// Start starts a server and registers its shutdown with tb.Cleanup.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s := &Server{tb: tb, host: "127.0.0.1", port: -1, dir: tb.TempDir()}
	if err := s.start(opts); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Shutdown)
	return s
}

// New starts a server outside a test (for Example functions and
// benchmarks run by hand). Close stops it and removes its data.
func New(opts ...Option) (*Server, error) {
	dir, err := os.MkdirTemp("", "natstest-")
	if err != nil {
		return nil, err
	}
	s := &Server{host: "127.0.0.1", port: -1, dir: dir}
	if err := s.start(opts); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Close shuts the server down and, for a server made by New, removes its
// data directory.
func (s *Server) Close() {
	s.Shutdown()
	if s.tb == nil {
		_ = os.RemoveAll(s.dir)
	}
}

// Restart shuts the server down and starts it again on the same port with
// the given options (which replace the previous ones). JetStream data is
// kept. Clients connected before see a disconnect and may reconnect.
func (s *Server) Restart(opts ...Option) {
	s.Shutdown()
	if err := s.start(opts); err != nil {
		s.fatal(err)
	}
}

// fatal ends the test; outside a test (New) a failed restart cannot be
// reported otherwise.
func (s *Server) fatal(err error) {
	if s.tb != nil {
		s.tb.Helper()
		s.tb.Fatal(err)
	}
	panic(err)
}

// Shutdown stops the server and waits until it has stopped. It is safe to
// call more than once.
func (s *Server) Shutdown() {
	if s.srv == nil {
		return
	}
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	s.srv = nil
}

func (s *Server) start(opts []Option) error {
	var c config
	for _, o := range opts {
		o(&c)
	}
	s.conf = c
	confFile := filepath.Join(s.dir, "server.conf")
	if err := os.WriteFile(confFile, []byte(s.configText()), 0o600); err != nil {
		return fmt.Errorf("natstest: write config: %w", err)
	}
	o, err := server.ProcessConfigFile(confFile)
	if err != nil {
		return fmt.Errorf("natstest: config: %w\n%s", err, s.configText())
	}
	o.NoSigs = true
	o.NoLog = !c.logs
	if s.port > 0 {
		o.Port = s.port
	}
	var srv *server.Server
	// A restart may find the port briefly unavailable; a loaded machine
	// (CI beside other builds) may take many seconds to start JetStream.
	deadline := time.Now().Add(30 * time.Second)
	for {
		srv, err = server.NewServer(o)
		if err != nil {
			return fmt.Errorf("natstest: new server: %w", err)
		}
		if c.logs {
			srv.ConfigureLogger()
		}
		go srv.Start()
		if srv.ReadyForConnections(30 * time.Second) {
			break
		}
		srv.Shutdown()
		srv.WaitForShutdown()
		if time.Now().After(deadline) {
			return fmt.Errorf("natstest: server not ready on port %d", s.port)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.srv = srv
	if s.port <= 0 {
		s.port = srv.Addr().(*net.TCPAddr).Port
	}
	return nil
}

func (s *Server) configText() string {
	var b strings.Builder
	port := s.port
	if port <= 0 {
		port = -1
	}
	fmt.Fprintf(&b, "listen: %q\n", fmt.Sprintf("%s:%d", s.host, port))
	if s.node != nil {
		s.node.configText(&b, s.host)
	}
	if s.conf.maxPayload > 0 {
		fmt.Fprintf(&b, "max_payload: %d\n", s.conf.maxPayload)
	}
	if s.conf.jetstream {
		domain := ""
		if s.conf.domain != "" {
			domain = fmt.Sprintf(", domain: %q", s.conf.domain)
		}
		fmt.Fprintf(&b, "jetstream: { store_dir: %q, max_memory_store: 1GB, max_file_store: 4GB%s }\n", filepath.Join(s.dir, "js"), domain)
	}
	s.leafConfigText(&b)
	js := ""
	if s.conf.jetstream {
		js = "jetstream: enabled, "
	}
	s.users = map[string]string{DefaultUser: DefaultPassword}
	b.WriteString("accounts: {\n")
	fmt.Fprintf(&b, "  %s: { %susers: [ { user: %q, password: %q }%s ] }\n", DefaultAccount, js, DefaultUser, DefaultPassword, s.usersConfigText()+s.rawUsersConfigText())
	for _, a := range s.conf.accounts {
		limits := ""
		if a.MaxPayload > 0 {
			limits = fmt.Sprintf(", limits: { max_payload: %d }", a.MaxPayload)
		}
		extra := ""
		if a.Extra != "" {
			extra = ", " + a.Extra
		}
		fmt.Fprintf(&b, "  %s: { %susers: [ { user: %q, password: %q } ]%s%s }\n", a.Name, js, a.User, a.Password, limits, extra)
		s.users[a.User] = a.Password
	}
	b.WriteString("}\n")
	fmt.Fprintf(&b, "no_auth_user: %q\n", DefaultUser)
	return b.String()
}

// URL returns the client URL; clients connecting without credentials are
// the DefaultUser of DefaultAccount.
func (s *Server) URL() string {
	return fmt.Sprintf("nats://%s:%d", s.host, s.port)
}

// UserURL returns a client URL with the credentials of user, which must
// have been added with WithAccount (or be DefaultUser).
func (s *Server) UserURL(user string) string {
	pass, ok := s.users[user]
	if !ok {
		s.fatal(fmt.Errorf("natstest: unknown user %q", user))
	}
	u := url.URL{Scheme: "nats", User: url.UserPassword(user, pass), Host: fmt.Sprintf("%s:%d", s.host, s.port)}
	return u.String()
}

// Port returns the port the server listens on; it stays the same across
// restarts.
func (s *Server) Port() int { return s.port }

// Server returns the running nats-server, or nil after Shutdown.
func (s *Server) Server() *server.Server { return s.srv }

// NumClients returns the number of client connections the server holds now.
func (s *Server) NumClients() int {
	if s.srv == nil {
		return 0
	}
	return s.srv.NumClients()
}
