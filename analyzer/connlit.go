package analyzer

import (
	"go/types"
)

// A connect in a function literal with the options of the enclosing
// function's caller (testkube's retry.Do shape):
//
//	func Dial(url string, opts ...nats.Option) (*nats.Conn, error) {
//		opts = append(opts, nats.MaxReconnects(-1))
//		return retry(func() (*nats.Conn, error) { return nats.Connect(url, opts...) })
//	}
//
// is judged as if Dial connected itself: at Dial's calls.

// outerParamSum judges v, read in the function literal fb, when v is a
// parameter (of option type, not nats.Options) of the declared function
// enclosing the literal: that function's caller's options, then what its
// body appends to them, with Outer set; false otherwise.
func (co *connOpts) outerParamSum(fb *fnBody, v *types.Var, kind optKind) (optSum, bool) {
	if fb == nil || fb.lit == nil || kind == optOptions {
		return optSum{}, false
	}
	vb := co.vals.bodies[co.vals.bodyOf(v)]
	if vb == nil || vb.self == nil || vb == fb {
		return optSum{}, false
	}
	i := co.paramIndex(vb, v)
	if i < 0 {
		return optSum{}, false
	}
	param := optSum{Buf: bufDefault, Param: i, Outer: true}
	if len(indexOf(vb).byVar[v]) > 0 {
		// opts = append(opts, ...) before the literal.
		return co.localSumFrom(vb, v, kind, param), true
	}
	return param, true
}

// enclosing returns the declared function whose body holds the literal
// of fb, or nil.
func (co *connOpts) enclosing(fb *fnBody) *types.Func {
	if fb == nil || fb.lit == nil {
		return nil
	}
	return co.vals.enclosingDecl(fb.lit)
}
