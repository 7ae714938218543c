package analyzer

// The receive paths the receiver check reads (receivers.go), by funcKey,
// and the calls that resolve claim checks. Like names.go and
// sendnames.go, TestNamesExist checks them against the real packages.

// receiveAPI is one receive path: how it hands messages over and what
// to use instead.
type receiveAPI struct {
	display string
	// arg is the index of the callback argument (a handler), or -1 when
	// the call hands messages to the calling function (a pull, a
	// channel); chanArg is the index of a channel argument, or -1.
	arg, chanArg int
	// subject is the index of the subject argument, or -1.
	subject int
	advice  string
	// fix names the claimcheck.Store method a suggested fix calls with
	// the same arguments plus an error handler ("" for none).
	fix string
}

const (
	adviceCore = "use (*claimcheck.Store).Subscribe or QueueSubscribe, or call (*claimcheck.Store).Resolve on each message"
	adviceJS   = "use (*claimcheck.Store).Consume or Messages, or call (*claimcheck.Store).ResolveJetStream on each message"
	adviceMsg  = "call (*claimcheck.Store).Resolve on each message"
)

// receiveAPIs are the raw receive paths: the callback subscriptions of
// nats.go and its legacy JetStream API, jetstream's Consume, and the calls
// that give the caller messages (channels, NextMsg, Fetch, Next).
var receiveAPIs = map[string]receiveAPI{
	natsPath + ".Conn.Subscribe":                  {"(*nats.Conn).Subscribe", 1, -1, 0, adviceCore, "Subscribe"},
	natsPath + ".Conn.QueueSubscribe":             {"(*nats.Conn).QueueSubscribe", 2, -1, 0, adviceCore, "QueueSubscribe"},
	natsPath + ".Conn.ChanSubscribe":              {"(*nats.Conn).ChanSubscribe", -1, 1, 0, adviceCore, ""},
	natsPath + ".Conn.ChanQueueSubscribe":         {"(*nats.Conn).ChanQueueSubscribe", -1, 2, 0, adviceCore, ""},
	natsPath + ".Conn.QueueSubscribeSyncWithChan": {"(*nats.Conn).QueueSubscribeSyncWithChan", -1, 2, 0, adviceCore, ""},
	natsPath + ".JetStream.Subscribe":             {"nats.JetStream.Subscribe", 1, -1, 0, adviceMsg, ""},
	natsPath + ".JetStream.QueueSubscribe":        {"nats.JetStream.QueueSubscribe", 2, -1, 0, adviceMsg, ""},
	natsPath + ".JetStream.ChanSubscribe":         {"nats.JetStream.ChanSubscribe", -1, 1, 0, adviceMsg, ""},
	natsPath + ".JetStream.ChanQueueSubscribe":    {"nats.JetStream.ChanQueueSubscribe", -1, 2, 0, adviceMsg, ""},
	natsPath + ".Subscription.NextMsg":            {"(*nats.Subscription).NextMsg", -1, -1, -1, adviceMsg, ""},
	natsPath + ".Subscription.NextMsgWithContext": {"(*nats.Subscription).NextMsgWithContext", -1, -1, -1, adviceMsg, ""},
	natsPath + ".Subscription.Fetch":              {"(*nats.Subscription).Fetch", -1, -1, -1, adviceMsg, ""},
	jetstreamPath + ".Consumer.Consume":           {"jetstream.Consumer.Consume", 0, -1, -1, adviceJS, "Consume"},
	jetstreamPath + ".PushConsumer.Consume":       {"jetstream.PushConsumer.Consume", 0, -1, -1, "call (*claimcheck.Store).ResolveJetStream on each message", ""},
	jetstreamPath + ".Consumer.Fetch":             {"jetstream.Consumer.Fetch", -1, -1, -1, adviceJS, ""},
	jetstreamPath + ".Consumer.FetchBytes":        {"jetstream.Consumer.FetchBytes", -1, -1, -1, adviceJS, ""},
	jetstreamPath + ".Consumer.FetchNoWait":       {"jetstream.Consumer.FetchNoWait", -1, -1, -1, adviceJS, ""},
	jetstreamPath + ".Consumer.Next":              {"jetstream.Consumer.Next", -1, -1, -1, adviceJS, ""},
	jetstreamPath + ".MessagesContext.Next":       {"jetstream.MessagesContext.Next", -1, -1, -1, adviceJS, ""},
	microPath + ".ContextHandler":                 {"micro.ContextHandler", 1, -1, -1, adviceMicro, ""},
}

// syncSubscribes make the subscriptions NextMsg and Fetch read: their
// first argument is the subject.
var syncSubscribes = setOf(
	natsPath+".Conn.SubscribeSync", natsPath+".Conn.QueueSubscribeSync",
	natsPath+".JetStream.SubscribeSync", natsPath+".JetStream.QueueSubscribeSync", natsPath+".JetStream.PullSubscribe",
)

// microHandlerFunc is the micro handler type a function is converted to.
const (
	microHandlerFunc = microPath + ".HandlerFunc"
	adviceMicro      = "read it with shim.ResolveMicro"
)

// messageData are the reads of a message's body: the field of nats.Msg
// and the methods of jetstream.Msg and micro.Request.
var (
	msgDataField   = "Data" // of nats.Msg
	messageMethods = setOf(jetstreamPath+".Msg.Data", microPath+".Request.Data")
)

// resolveFuncs resolve or recognise a claim check: a handler that calls
// one of them handles claim checks. claimUseFuncs put claim checks in use
// in a package.
var (
	resolveFuncs = setOf(
		claimcheckPath+".Store.Resolve", claimcheckPath+".Store.Open", claimcheckPath+".Store.ResolveJetStream",
		claimcheckPath+".IsClaimCheck", shimPath+".ResolveMicro",
	)
	claimHeaders  = setOf(claimcheckPath+".HeaderRef", claimcheckPath+".HeaderSize")
	claimUseFuncs = setOf(shimPath+".WithClaimChecks", shimPath+".ServeClaimChecks")
)
