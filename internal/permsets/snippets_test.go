package permsets

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// docFile is the documentation whose conf blocks are the permission sets.
const docFile = "../../docs/permissions.md"

// password is every test user's password: the documented entries read
// theirs from a variable, which snippet replaces.
const password = "permsets"

// snippet is one documented user entry.
type snippet struct {
	user  string              // the entry's user name
	line  int                 // of its opening fence in docFile
	text  string              // the entry as documented
	perms *server.Permissions // as nats-server parses it
}

var (
	userRE     = regexp.MustCompile(`(?m)^\s*user:\s*"?([\w-]+)"?\s*$`)
	passwordRE = regexp.MustCompile(`(?m)^(\s*password:\s*)\$[A-Z0-9_]+\s*$`)
	subjectRE  = regexp.MustCompile(`^\s*"([^"]+)"\s*(.*)$`)
)

// snippets returns the conf blocks of docFile by user name.
func snippets(t *testing.T) map[string]*snippet {
	t.Helper()
	f, err := os.Open(docFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := make(map[string]*snippet)
	var cur *strings.Builder
	start := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(l) == "```conf":
			cur, start = &strings.Builder{}, n
		case cur != nil && strings.TrimSpace(l) == "```":
			s := parseSnippet(t, cur.String(), start)
			if out[s.user] != nil {
				t.Fatalf("%s:%d: user %q is documented twice", docFile, start, s.user)
			}
			out[s.user] = s
			cur = nil
		case cur != nil:
			cur.WriteString(l)
			cur.WriteString("\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// parseSnippet parses one conf block as nats-server does.
func parseSnippet(t *testing.T, text string, line int) *snippet {
	t.Helper()
	m := userRE.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s:%d: a conf block without a user", docFile, line)
	}
	if !passwordRE.MatchString(text) {
		t.Fatalf("%s:%d: the password must come from a variable ($NAME_PASSWORD)", docFile, line)
	}
	text = passwordRE.ReplaceAllString(text, fmt.Sprintf("${1}%q", password))
	perms, err := parsePermissions(t, text)
	if err != nil {
		t.Fatalf("%s:%d: %v", docFile, line, err)
	}
	return &snippet{user: m[1], line: line, text: text, perms: perms}
}

// parsePermissions returns the permissions nats-server reads from the
// user entry text.
func parsePermissions(t *testing.T, entry string) (*server.Permissions, error) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "users.conf")
	conf := "accounts: { A: { users: [\n" + entry + "\n] } }\n"
	if err := os.WriteFile(f, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	o, err := server.ProcessConfigFile(f)
	if err != nil {
		return nil, err
	}
	if len(o.Users) != 1 || o.Users[0].Permissions == nil {
		return nil, fmt.Errorf("want one user with permissions, got %d users", len(o.Users))
	}
	return o.Users[0].Permissions, nil
}

// permission is one grant of a set: a subject of a publish or subscribe
// allow list, or allow_responses.
type permission struct {
	kind    string // "publish", "subscribe" or "allow_responses"
	subject string // "" for allow_responses
}

func (p permission) String() string {
	if p.kind == "allow_responses" {
		return p.kind
	}
	return p.kind + " " + p.subject
}

// grants returns every grant of perms.
func grants(perms *server.Permissions) []permission {
	var out []permission
	if perms.Publish != nil {
		for _, s := range perms.Publish.Allow {
			out = append(out, permission{"publish", s})
		}
	}
	if perms.Subscribe != nil {
		for _, s := range perms.Subscribe.Allow {
			out = append(out, permission{"subscribe", s})
		}
	}
	if perms.Response != nil {
		out = append(out, permission{kind: "allow_responses"})
	}
	return out
}

// without renders the user entry of name with perms less one grant, in
// the configuration syntax. An allow list left empty becomes a deny of
// everything: to nats-server an empty allow list means no restriction.
func without(name string, perms *server.Permissions, drop permission) string {
	var parts []string
	side := func(kind string, sp *server.SubjectPermission) {
		if sp == nil {
			return
		}
		var allow []string
		for _, s := range sp.Allow {
			if (permission{kind, s}) != drop {
				allow = append(allow, s)
			}
		}
		deny := append([]string(nil), sp.Deny...)
		if len(allow) == 0 && len(sp.Allow) > 0 {
			deny = append(deny, ">")
		}
		var b []string
		if len(allow) > 0 {
			b = append(b, "allow: "+list(allow))
		}
		if len(deny) > 0 {
			b = append(b, "deny: "+list(deny))
		}
		if len(b) > 0 {
			parts = append(parts, kind+": { "+strings.Join(b, ", ")+" }")
		}
	}
	side("publish", perms.Publish)
	side("subscribe", perms.Subscribe)
	if r := perms.Response; r != nil && drop.kind != "allow_responses" {
		parts = append(parts, fmt.Sprintf("allow_responses: { max: %d, expires: %q }", r.MaxMsgs, r.Expires.String()))
	}
	return fmt.Sprintf("{ user: %q, password: %q, permissions: { %s } }", name, password, strings.Join(parts, ", "))
}

// list is subjects as a configuration list.
func list(subjects []string) string {
	q := make([]string, len(subjects))
	for i, s := range subjects {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// TestAuthorizationBlock: the documented entries, all of them, are also
// accepted as the users of a server's authorization block, the other
// place docs/permissions.md puts them, with the same permissions.
func TestAuthorizationBlock(t *testing.T) {
	docs := snippets(t)
	var b strings.Builder
	b.WriteString("authorization {\n  users: [\n")
	for _, s := range docs {
		b.WriteString(s.text)
	}
	b.WriteString("  ]\n}\n")
	f := filepath.Join(t.TempDir(), "auth.conf")
	if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := server.ProcessConfigFile(f)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(o.Users) != len(docs) {
		t.Fatalf("%d users parsed, want %d", len(o.Users), len(docs))
	}
	for _, u := range o.Users {
		s := docs[u.Username]
		if s == nil {
			t.Errorf("user %q is not documented", u.Username)
			continue
		}
		if got, want := fmt.Sprint(grants(u.Permissions)), fmt.Sprint(grants(s.perms)); got != want {
			t.Errorf("%s: in an authorization block %s, in an account %s", u.Username, got, want)
		}
	}
}

// TestDocumentedSets: every conf block of docs/permissions.md is a user
// entry nats-server accepts, of a role this package tests (and every role
// is documented), with one subject per line and a reason for each; a set
// without its one dropped grant renders to what nats-server reads back.
func TestDocumentedSets(t *testing.T) {
	docs := snippets(t)
	var users []string
	for u := range docs {
		users = append(users, u)
	}
	sort.Strings(users)
	for _, u := range users {
		if roles[u] == nil {
			t.Errorf("%s:%d: user %q is not a role this package tests", docFile, docs[u].line, u)
		}
	}
	for u := range roles {
		if docs[u] == nil {
			t.Errorf("role %q is not documented in %s", u, docFile)
		}
	}
	for _, u := range users {
		s := docs[u]
		// Every granted subject is on a line of its own with its reason.
		lines := map[string]bool{}
		for _, l := range strings.Split(s.text, "\n") {
			m := subjectRE.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			lines[m[1]] = true
			if !strings.HasPrefix(m[2], "#") || len(strings.TrimSpace(strings.TrimPrefix(m[2], "#"))) < 10 {
				t.Errorf("%s:%d: %s: %q has no reason (a # comment on its line)", docFile, s.line, u, m[1])
			}
		}
		gs := grants(s.perms)
		if len(gs) == 0 {
			t.Errorf("%s:%d: %s grants nothing", docFile, s.line, u)
		}
		for _, g := range gs {
			if g.kind != "allow_responses" && !lines[g.subject] {
				t.Errorf("%s:%d: %s: %s is not on a line of its own", docFile, s.line, u, g)
			}
		}
		if r := s.perms.Response; r != nil && (r.MaxMsgs == 0 || r.Expires <= 0) {
			t.Errorf("%s:%d: %s: allow_responses must state max and expires, got %+v", docFile, s.line, u, *r)
		}
		for _, g := range gs {
			p, err := parsePermissions(t, without(u, s.perms, g))
			if err != nil {
				t.Fatalf("%s without %s: %v", u, g, err)
			}
			if got, want := len(grants(p)), len(gs)-1; got != want {
				t.Errorf("%s without %s renders %d grants, want %d", u, g, got, want)
			}
			for _, h := range grants(p) {
				if h == g {
					t.Errorf("%s without %s still grants it", u, g)
				}
			}
			if p.Publish == nil && s.perms.Publish != nil || p.Subscribe == nil && s.perms.Subscribe != nil {
				t.Errorf("%s without %s lost a restriction", u, g)
			}
		}
	}
}
