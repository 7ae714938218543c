// Package othershim is a package named shim that is not the natssend shim.
package shim

// Publish is not shim.Publish.
func Publish() {}
