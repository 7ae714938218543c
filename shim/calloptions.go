package shim

import "time"

// The call options. Each call takes only the options it honours, as
// jetstream's Consume and Messages do, so an option a call would ignore
// does not compile there: Request and RequestMsg take CallOptions,
// RequestStream and RequestMsgStream StreamOptions, RequestMany
// ManyOptions. Timeout and OperationID are options of every call
// (CommonOption), Attempts and AttemptTimeout of the calls that can send
// again (AttemptOption). An invalid value refuses the call with its
// error, which wraps ErrInvalidOption; a nil option is ignored.
type (
	// CallOption configures Request and RequestMsg.
	CallOption interface{ applyCall(*callOpts) error }
	// StreamOption configures RequestStream and RequestMsgStream.
	StreamOption interface{ applyStream(*callOpts) error }
	// ManyOption configures RequestMany.
	ManyOption interface{ applyMany(*callOpts) error }
	// CommonOption is an option of every call (Timeout, OperationID).
	CommonOption interface {
		CallOption
		StreamOption
		ManyOption
	}
	// AttemptOption is an option of the calls that send again (Attempts,
	// AttemptTimeout): Request, RequestMsg, RequestStream and
	// RequestMsgStream; RequestMany is sent once.
	AttemptOption interface {
		CallOption
		StreamOption
	}
)

// commonOpt, attemptOpt, streamOpt and manyOpt are the option
// implementations, each for the calls that honour it.
type (
	commonOpt  func(*callOpts) error
	attemptOpt func(*callOpts) error
	streamOpt  func(*callOpts) error
	manyOpt    func(*callOpts) error
)

func (f commonOpt) applyCall(o *callOpts) error    { return f(o) }
func (f commonOpt) applyStream(o *callOpts) error  { return f(o) }
func (f commonOpt) applyMany(o *callOpts) error    { return f(o) }
func (f attemptOpt) applyCall(o *callOpts) error   { return f(o) }
func (f attemptOpt) applyStream(o *callOpts) error { return f(o) }
func (f streamOpt) applyStream(o *callOpts) error  { return f(o) }
func (f manyOpt) applyMany(o *callOpts) error      { return f(o) }

type callOpts struct {
	timeout     time.Duration
	opID        string         // OperationID
	attempts    int            // Attempts; 0 or 1: one send
	attemptWait time.Duration  // AttemptTimeout; 0: DefaultAttemptTimeout
	x           extOpts        // options of RequestStream and RequestMany (stream_opts.go)
	tele        *callTelemetry // set by requestTraced; nil without telemetry
}

// Timeout is a call-level CallOption: it sets this one call's timeout,
// in place of the client-level WithTimeout (or DefaultTimeout), longer or
// shorter. The call's deadline is the earlier of the context's deadline
// and this timeout; Attempts (with or without claim checks) schedule
// every attempt within it. It must be positive.
func Timeout(d time.Duration) CommonOption {
	return commonOpt(func(o *callOpts) error {
		if d <= 0 {
			return invalidOption("Timeout(%v): the timeout must be positive", d)
		}
		o.timeout = d
		return nil
	})
}

// callOptions applies a call's options. It returns them by value, so that
// a call without options allocates nothing for them.
func callOptions(opts []CallOption) (callOpts, error) {
	var co callOpts
	err := applyEach(opts, func(o CallOption) error { return o.applyCall(&co) })
	return co, err
}

// streamOptions is callOptions for a stream's options.
func streamOptions(opts []StreamOption) (callOpts, error) {
	var co callOpts
	err := applyEach(opts, func(o StreamOption) error { return o.applyStream(&co) })
	return co, err
}

// manyOptions is callOptions for RequestMany's options.
func manyOptions(opts []ManyOption) (callOpts, error) {
	var co callOpts
	err := applyEach(opts, func(o ManyOption) error { return o.applyMany(&co) })
	return co, err
}
