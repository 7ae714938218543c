package natstest

import (
	"fmt"
	"strings"
)

// User is another user of DefaultAccount, with narrow permissions: the
// subjects it may publish to and subscribe to (nil: no restriction of
// that kind), and allow_responses.
type User struct {
	Name, Password string
	Publish        []string // allowed publish subjects; nil: any
	Subscribe      []string // allowed subscribe subjects; nil: any
	// Responses, when not empty, is the server's allow_responses value as
	// configuration text: "true", or "{ max: -1, expires: 5m }".
	Responses string
}

// WithUser adds u to DefaultAccount (UserURL(u.Name) connects as u).
func WithUser(u User) Option { return func(c *config) { c.users = append(c.users, u) } }

// usersConfigText is the extra users' part of DefaultAccount's users list.
func (s *Server) usersConfigText() string {
	var b strings.Builder
	for _, u := range s.conf.users {
		s.users[u.Name] = u.Password
		var perms []string
		if u.Publish != nil {
			perms = append(perms, "publish: { allow: "+subjectList(u.Publish)+" }")
		}
		if u.Subscribe != nil {
			perms = append(perms, "subscribe: { allow: "+subjectList(u.Subscribe)+" }")
		}
		if u.Responses != "" {
			perms = append(perms, "allow_responses: "+u.Responses)
		}
		fmt.Fprintf(&b, ", { user: %q, password: %q, permissions: { %s } }", u.Name, u.Password, strings.Join(perms, ", "))
	}
	return b.String()
}

// subjectList is subjects as a configuration list.
func subjectList(subjects []string) string {
	q := make([]string, len(subjects))
	for i, subj := range subjects {
		q[i] = fmt.Sprintf("%q", subj)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// rawUser is a user of DefaultAccount given as configuration text.
type rawUser struct {
	name, password, entry string
}

// WithUserConfig adds a user to DefaultAccount given as a user entry in
// the server's configuration syntax, exactly as an operator writes it in
// an authorization or account users list ({ user: ..., password: ...,
// permissions: { ... } }); name and password are what UserURL(name)
// connects with and must match the entry.
func WithUserConfig(name, password, entry string) Option {
	return func(c *config) { c.rawUsers = append(c.rawUsers, rawUser{name, password, entry}) }
}

// rawUsersConfigText is the users' part of DefaultAccount's users list
// that WithUserConfig gave, each entry on lines of its own (the
// configuration syntax separates array elements by newlines).
func (s *Server) rawUsersConfigText() string {
	var b strings.Builder
	for _, u := range s.conf.rawUsers {
		s.users[u.name] = u.password
		b.WriteString("\n")
		b.WriteString(u.entry)
		b.WriteString("\n")
	}
	return b.String()
}
