package analyzer

// The send catalogue: the raw nats.go sends and the shim and claimcheck
// sends, by funcKey (see names.go, which holds the other names matched by
// string; TestNamesExist checks both against the real packages).

// The reason and the replacement of each raw send, for rawsend messages
// ("raw API <why>: use <what>").
const (
	whySizing  = "bypasses exact sizing"
	whyRequest = "can be replayed after its timeout and is not size-capped"
	whyReply   = "drops an oversized reply and the caller waits for a timeout"
	whyMicro   = "loses an oversized reply (micro wraps ErrMaxPayload)"
	whyJS      = "bypasses claim checks, so an oversized message is refused"
	whyKV      = "is refused above max_payload and no claim check can stand in for a value: keep values under the connection's limit, or store a large one in an object store and put its name (docs/checks.md#jetstream-keyvalue)"
)

// rawSends is the catalogue of raw nats.go send APIs, by funcKey. The
// JetStream publishes are added by init for each interface that declares
// them.
var rawSends = map[string]rawSend{
	natsPath + ".Conn.Publish":               {"(*nats.Conn).Publish", whySizing + ": use shim.Publish", fixPublish, kindPublish},
	natsPath + ".Conn.PublishMsg":            {"(*nats.Conn).PublishMsg", whySizing + ": use shim.PublishMsg", fixPublishMsg, kindPublish},
	natsPath + ".Conn.PublishRequest":        {"(*nats.Conn).PublishRequest", "hand-rolls a request with no deadline or size cap: use (*shim.Client).Request", fixNone, kindRequest},
	natsPath + ".Conn.Request":               {"(*nats.Conn).Request", whyRequest + ": use (*shim.Client).Request", fixNone, kindRequest},
	natsPath + ".Conn.RequestWithContext":    {"(*nats.Conn).RequestWithContext", whyRequest + ": use (*shim.Client).Request", fixNone, kindRequest},
	natsPath + ".Conn.RequestMsg":            {"(*nats.Conn).RequestMsg", whyRequest + ": use (*shim.Client).RequestMsg", fixNone, kindRequest},
	natsPath + ".Conn.RequestMsgWithContext": {"(*nats.Conn).RequestMsgWithContext", whyRequest + ": use (*shim.Client).RequestMsg", fixNone, kindRequest},
	natsPath + ".Msg.Respond":                {"(*nats.Msg).Respond", whyReply + ": use shim.Respond", fixRespond, kindReply},
	natsPath + ".Msg.RespondMsg":             {"(*nats.Msg).RespondMsg", whyReply + ": use shim.Respond with its data and header", fixNone, kindReply},
	natsPath + ".EncodedConn.Publish":        {"(*nats.EncodedConn).Publish", whySizing + ": encode the value and use shim.Publish", fixNone, kindPublish},
	natsPath + ".EncodedConn.PublishRequest": {"(*nats.EncodedConn).PublishRequest", "hand-rolls a request with no deadline or size cap: encode the value and use (*shim.Client).Request", fixNone, kindRequest},
	natsPath + ".EncodedConn.Request":        {"(*nats.EncodedConn).Request", whyRequest + ": encode the value and use (*shim.Client).Request", fixNone, kindRequest},
	microPath + ".Request.Respond":           {"(micro.Request).Respond", whyMicro + ": use shim.RespondMicro", fixNone, kindReply},
	microPath + ".Request.RespondJSON":       {"(micro.Request).RespondJSON", whyMicro + ": encode the value and use shim.RespondMicro", fixNone, kindReply},
	microPath + ".Request.Error":             {"(micro.Request).Error", whyMicro + ": use shim.RespondMicroError", fixNone, kindReply},
}

// jetStreamPublishers are the interfaces declaring JetStream publishes:
// legacy nats.JetStream (embedded in nats.JetStreamContext, whose methods
// resolve to it) and jetstream.Publisher (embedded in jetstream.JetStream).
var jetStreamPublishers = map[string]string{
	natsPath + ".JetStream":      "nats.JetStream",
	jetstreamPath + ".Publisher": "jetstream.Publisher",
}

// keyValues are the JetStream KeyValue interfaces, whose writes are
// JetStream publishes to the bucket's stream: legacy nats.KeyValue and
// jetstream.KeyValue.
var keyValues = map[string]string{
	natsPath + ".KeyValue":      "nats.KeyValue",
	jetstreamPath + ".KeyValue": "jetstream.KeyValue",
}

func init() {
	for path, iface := range keyValues {
		for m, kind := range map[string]sendKind{"Put": kindKV, "PutString": kindKV, "Create": kindKVGuarded, "Update": kindKVGuarded} {
			rawSends[path+"."+m] = rawSend{display: "(" + iface + ")." + m, advice: whyKV, kind: kind}
		}
	}
	for path, iface := range jetStreamPublishers {
		for _, m := range []string{"Publish", "PublishMsg", "PublishAsync", "PublishMsgAsync"} {
			rawSends[path+"."+m] = rawSend{
				display: "(" + iface + ")." + m,
				advice:  whyJS + ": use claimcheck (*Store).PublishJetStream",
				kind:    kindJetStream,
			}
		}
	}
}

// shimSends is the catalogue of sends through natssend's shim and
// claimcheck packages: not raw sends, but still sends for the retry check.
var shimSends = map[string]shimSend{
	shimPath + ".Publish":                      {"shim.Publish", kindPublish},
	shimPath + ".PublishMsg":                   {"shim.PublishMsg", kindPublish},
	shimPath + ".PublishContext":               {"shim.PublishContext", kindPublish},
	shimPath + ".PublishMsgContext":            {"shim.PublishMsgContext", kindPublish},
	shimPath + ".Client.Request":               {"(*shim.Client).Request", kindRequest},
	shimPath + ".Client.RequestMsg":            {"(*shim.Client).RequestMsg", kindRequest},
	shimPath + ".Respond":                      {"shim.Respond", kindReply},
	shimPath + ".RespondError":                 {"shim.RespondError", kindReply},
	shimPath + ".RespondMicro":                 {"shim.RespondMicro", kindReply},
	shimPath + ".RespondMicroError":            {"shim.RespondMicroError", kindReply},
	claimcheckPath + ".Store.PublishMsg":       {"(*claimcheck.Store).PublishMsg", kindPublish},
	claimcheckPath + ".Store.Prepare":          {"(*claimcheck.Store).Prepare", kindStore},
	claimcheckPath + ".Store.PublishJetStream": {"(*claimcheck.Store).PublishJetStream", kindJetStream},

	shimPath + ".ResolveMicro":           {"shim.ResolveMicro", kindReply},
	shimPath + ".RespondMicroClaimCheck": {"shim.RespondMicroClaimCheck", kindReply},

	shimPath + ".Client.RequestStream":    {"(*shim.Client).RequestStream", kindRequest},
	shimPath + ".Client.RequestMsgStream": {"(*shim.Client).RequestMsgStream", kindRequest},
	shimPath + ".StreamWriter.Write":      {"(*shim.StreamWriter).Write", kindReply},
	shimPath + ".StreamWriter.Flush":      {"(*shim.StreamWriter).Flush", kindReply},
	shimPath + ".Client.RequestMany":      {"(*shim.Client).RequestMany", kindRequest},
}
