package connect // want package:"uses nats.go"

import (
	"time"

	"github.com/nats-io/nats.go"
)

const noBuffer = -1

func connects(url string, opts []nats.Option, mine nats.Option, n int) {
	_, _ = nats.Connect(url)                                                       // want `nats\.Connect without nats\.ReconnectBufSize\(-1\) keeps the reconnect buffer: a buffered request goes out after its timeout; use shim\.Connect`
	_, _ = nats.Connect(url, nats.Name("svc"), nats.Timeout(time.Second))          // want `nats.Connect without nats.ReconnectBufSize\(-1\)`
	_, _ = nats.Connect(url, nats.ReconnectBufSize(0))                             // want `nats\.Connect with ReconnectBufSize\(0\) still buffers \(-1 disables it\): a buffered request goes out after its timeout; use shim\.Connect`
	_, _ = nats.Connect(url, nats.ReconnectBufSize(1024))                          // want `nats\.Connect with ReconnectBufSize\(1024\) still buffers \(-1 disables it\): a buffered request goes out after its timeout; use shim\.Connect`
	_, _ = nats.Connect(url, nats.ReconnectBufSize(-1), nats.ReconnectBufSize(64)) // want `nats\.Connect with ReconnectBufSize\(64\) still buffers \(-1 disables it\): a buffered request goes out after its timeout; use shim\.Connect`
	_, _ = nats.Connect(url, func(o *nats.Options) error {                         // want `nats\.Connect with ReconnectBufSize\(10\) still buffers \(-1 disables it\): a buffered request goes out after its timeout; use shim\.Connect`
		o.ReconnectBufSize = 10
		return nil
	})

	// Not reported: buffering disabled, or not visible.
	_, _ = nats.Connect(url, nats.ReconnectBufSize(-1))
	_, _ = nats.Connect(url, nats.Name("svc"), nats.ReconnectBufSize(noBuffer))
	_, _ = nats.Connect(url, nats.NoReconnect())
	_, _ = nats.Connect(url, nats.ReconnectBufSize(64), nats.ReconnectBufSize(-1))
	_, _ = nats.Connect(url, func(o *nats.Options) error { o.ReconnectBufSize = -1; return nil })
	_, _ = nats.Connect(url, opts...)                    // a spread slice: not visible
	_, _ = nats.Connect(url, mine)                       // an option value: not visible
	_, _ = nats.Connect(url, nats.ReconnectBufSize(n))   // not a constant
	_, _ = nats.Connect(url, nats.Name("svc"), custom()) // built elsewhere: not visible
	connect := func(string) (*nats.Conn, error) { return nil, nil }
	_, _ = connect(url) // not nats.Connect
}

func custom() nats.Option { return nats.ReconnectBufSize(-1) }

func options(url string, param nats.Options) {
	_, _ = nats.GetDefaultOptions().Connect() // want `\(nats\.Options\)\.Connect leaves ReconnectBufSize at its default \(8 MiB\): a buffered request goes out after its timeout; use shim\.Connect`

	o := nats.GetDefaultOptions()
	o.Url = url
	_, _ = o.Connect() // want `\(nats.Options\).Connect leaves ReconnectBufSize at its default`

	lit := nats.Options{Url: url, AllowReconnect: true}
	_, _ = lit.Connect() // want `\(nats.Options\).Connect leaves ReconnectBufSize at its default`

	_, _ = nats.Options{Url: url, AllowReconnect: true, ReconnectBufSize: 4096}.Connect() // want `\(nats\.Options\)\.Connect with ReconnectBufSize\(4096\) still buffers \(-1 disables it\): a buffered request goes out after its timeout; use shim\.Connect`

	set := nats.GetDefaultOptions()
	set.ReconnectBufSize = 0
	_, _ = set.Connect() // want `\(nats\.Options\)\.Connect with ReconnectBufSize\(0\) still buffers \(-1 disables it\): a buffered request goes out after its timeout; use shim\.Connect`

	// Not reported.
	good := nats.GetDefaultOptions()
	good.ReconnectBufSize = -1
	_, _ = good.Connect()

	_, _ = nats.Options{Url: url}.Connect() // AllowReconnect false: no reconnecting
	noRe := nats.GetDefaultOptions()
	noRe.AllowReconnect = false
	_, _ = noRe.Connect()

	_, _ = param.Connect() // a parameter: not visible

	escaped := nats.GetDefaultOptions()
	configure(&escaped)
	_, _ = escaped.Connect() // its address escapes: not visible
}

func configure(o *nats.Options) { o.ReconnectBufSize = -1 }

// Options built in the function and spread.
func optionSlices(url string, name string, quiet bool) {
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(10)}
	_, _ = nats.Connect(url, opts...) // want `nats.Connect without nats.ReconnectBufSize\(-1\) keeps the reconnect buffer`

	safe := []nats.Option{nats.Name(name)}
	safe = append(safe, nats.ReconnectBufSize(-1))
	_, _ = nats.Connect(url, safe...)

	sized := []nats.Option{nats.Name(name)}
	sized = append(sized, nats.ReconnectBufSize(1<<20))
	_, _ = nats.Connect(url, sized...) // want `nats.Connect with ReconnectBufSize\(1048576\) still buffers`

	// A slice from a function of the package is judged by its returns.
	_, _ = nats.Connect(url, defaultOptions()...) // want `nats.Connect without nats.ReconnectBufSize\(-1\) keeps the reconnect buffer`

	// Not judged: a slice changed by index.
	built := []nats.Option{nats.Name(name)}
	built[0] = optionFrom(quiet)
	_, _ = nats.Connect(url, built...)

	// A builder returning the options with an error, then appended to:
	// the builder disabled the buffer.
	fromBuilder, err := buildOptions(name)
	if err != nil {
		return
	}
	fromBuilder = append(fromBuilder, nats.MaxReconnects(-1))
	_, _ = nats.Connect(url, fromBuilder...)

	// A slice declared empty and appended to is read.
	var grown []nats.Option
	grown = append(grown, nats.Name(name))
	_, _ = nats.Connect(url, grown...) // want `nats.Connect without nats.ReconnectBufSize\(-1\) keeps the reconnect buffer`
}

func buildOptions(name string) ([]nats.Option, error) {
	return []nats.Option{nats.Name(name), nats.ReconnectBufSize(-1)}, nil
}

func defaultOptions() []nats.Option { return []nats.Option{nats.Name("x")} }

func optionFrom(bool) nats.Option { return nats.Name("y") }
