package shim

import "github.com/natssend/natssend/internal/connlimit"

// RegistrySize exposes the number of connections with limit state.
func RegistrySize() int { return connlimit.Size() }
