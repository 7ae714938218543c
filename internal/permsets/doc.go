// Package permsets holds only tests: it checks the permission sets that
// docs/permissions.md documents for each role a natssend service plays
// (publisher, resolver, resolver with DeleteAfterRead, caller with and
// without claim checks, responder with and without claim checks, stream
// caller, stream responder).
//
// The tests read the conf blocks of docs/permissions.md themselves, so the
// documentation and the tests cannot drift apart. For each role they start
// a real nats-server (internal/natstest, configured through a generated
// configuration file) whose user is the documented entry, verbatim, and
// run every natssend feature of the role, which must work. Then, for each
// permission of the set in turn, they start a server whose user lacks just
// that one permission and run the role again: the step that needs it must
// fail with a permission error (errors.Is nats.ErrPermissionViolation,
// PERMISSION_DENIED) well before the step's own deadline; a deadline, a
// "missing" error or a silent success fails the row.
package permsets
