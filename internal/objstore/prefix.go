package objstore

import (
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// APIPrefix returns the JetStream API prefix js sends its requests under,
// with its trailing dot: "$JS.<domain>.API." for a JetStream made with
// jetstream.NewWithDomain, the given prefix for jetstream.NewWithAPIPrefix
// and "$JS.API." otherwise.
func APIPrefix(js jetstream.JetStream) string {
	o := js.Options()
	switch {
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	case o.APIPrefix != "":
		if strings.HasSuffix(o.APIPrefix, ".") {
			return o.APIPrefix
		}
		return o.APIPrefix + "."
	default:
		return jetstream.DefaultAPIPrefix
	}
}
