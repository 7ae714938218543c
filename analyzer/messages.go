package analyzer

// docsURL is the page with one section per category, the Diagnostic.URL
// of every finding.
const docsURL = "https://github.com/natssend/natssend/blob/main/docs/checks.md#"

// categoryURL returns the documentation of a category.
func categoryURL(category string) string { return docsURL + category }

// retryAdvice says, in a few words, why retrying a send of kind k is
// unsafe and what to do instead.
func retryAdvice(k sendKind) string {
	switch k {
	case kindRequest:
		return "it may have run; use a fixed shim.OperationID the responder de-duplicates, and Attempts (docs/checks.md#operation-ids)"
	case kindReply:
		return "it may have been written; reply once"
	case kindJetStream:
		return "it may be stored; fix its ID with jetstream.WithMsgID"
	case kindStore:
		return "it may be stored; reconcile first, or use shim.Retry"
	case kindKV, kindKVGuarded:
		return "it may be stored, and a Put again writes another revision; use Create, or Update with the revision read, whose repeat the bucket refuses (docs/checks.md#jetstream-keyvalue)"
	}
	return "it may be out already; retry with shim.Retry"
}

// ackAdvice is the advice for a send repeated when its acknowledgement is
// late (ackwait.go).
const ackAdvice = "it may have arrived and its ack been lost; if the receiver drops duplicates (a sequence number), mark it //natssend:reviewed retry: <reason>"
