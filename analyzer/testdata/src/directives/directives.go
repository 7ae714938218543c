package directives // want package:"uses nats.go"

import (
	"log"

	"github.com/nats-io/nats.go"
	"github.com/natssend/natssend/shim"
)

func reviewed(nc *nats.Conn, m *nats.Msg) error { // want reviewed:`sends via \(\*nats.Conn\).Publish`
	_ = nc.Publish("a", nil) //natssend:reviewed status pings are 2 bytes

	//natssend:reviewed the line above counts
	_ = nc.Publish("a", nil)

	//natssend:reviewed a directive may head a comment block
	// that explains it further.
	_ = nc.Publish("a", nil)

	_ = nc.Publish( // a call spanning several lines is one statement
		"a",
		nil,
	) //natssend:reviewed on the last line

	//natssend:reviewed above a multi-line call
	_ = nc.Publish(
		"a",
		nil,
	)

	_ = nc.Publish(
		"a", //natssend:reviewed in the middle of the call
		nil,
	)

	_ = m.Respond(nil) //natssend:reviewed // want `//natssend:reviewed needs a reason: say why this send is safe`

	_ = m.Respond(nil) // natssend:reviewed with a space // want `malformed directive: write //natssend:reviewed with no space after //` `raw \(\*nats.Msg\).Respond`

	_ = m.Respond(nil) //natssend:ok // want `unknown directive //natssend:ok: the review directive is //natssend:reviewed <reason>` `raw \(\*nats.Msg\).Respond`

	log.Print("no send here") //natssend:reviewed stale // want `unused //natssend:reviewed directive: no NATS send, retry or connect is reported on this statement; remove it`

	if err := nc.Publish("a", nil); err != nil { // want `raw \(\*nats.Conn\).Publish`
		//natssend:reviewed inside the block, not on the if // want `unused //natssend:reviewed directive`
		log.Print(err)
	}

	x := 1                   //natssend:reviewed a trailing directive is for its own line // want `unused //natssend:reviewed directive`
	_ = nc.Publish("a", nil) // want `raw \(\*nats.Conn\).Publish`
	_ = x

	//natssend:reviewed the closure is covered, not its body // want `unused //natssend:reviewed directive`
	run(func() {
		log.Print("a")
		_ = nc.Publish("a", nil) // want `raw \(\*nats.Conn\).Publish`
	})

	run(func() {
		_ = nc.Publish("a", nil) //natssend:reviewed inside the closure
	})

	//natssend:reviewed retry: a retry reviewed with its send
	for nc.Publish("a", nil) != nil {
	}

	//natssend:reviewed a size justification covers the raw send, not the retry
	for nc.Publish("a", nil) != nil { // want `call of \(\*nats\.Conn\)\.Publish is retried on failure: it may be out already; retry with shim\.Retry \(a directive needs "retry: <reason>"\)`
	}

	//natssend:reviewed nothing but a retry here // want `unused //natssend:reviewed directive: it does not cover the retry reported on this statement; review a retry with //natssend:reviewed retry: <reason>`
	for shim.Publish(nc, "a", nil) != nil { // want `call of shim.Publish is retried on failure`
	}

	//natssend:reviewed retry: idempotent consumer
	for shim.Publish(nc, "a", nil) != nil {
	}

	//natssend:reviewed retry: // want `//natssend:reviewed needs a reason`
	for shim.Publish(nc, "a", nil) != nil {
	}

	//natssend:reviewed retry: a retry directive on a send that is not retried also covers the rest
	_ = nc.Publish("a", nil)

	//natssend:reviewed retry: no send at all // want `unused //natssend:reviewed directive: no NATS send`
	log.Print("x")

	//natssend:reviewed a connection reviewed
	_, _ = nats.Connect("nats://localhost")
	return nil
}

func run(f func()) { f() }

var pub = (*nats.Conn).Publish //natssend:reviewed package-level method value

/*natssend:reviewed a block comment is not a directive*/
var pub2 = (*nats.Conn).Publish // want `raw \(\*nats.Conn\).Publish taken as a function value`

// Prose quoting the directive with a space, as in
// natssend:reviewed <reason>, is not reported when no finding is near:
// natssend:reviewed is written without a space after the slashes.
func prose() {}

func spacedNear(nc *nats.Conn) { // want spacedNear:`sends via \(\*nats.Conn\).Publish`
	// natssend:reviewed a spaced directive above a finding // want `malformed directive`
	_ = nc.Publish("a", nil) // want `raw \(\*nats.Conn\).Publish`
}
