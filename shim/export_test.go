package shim

// RegistrySize exposes the number of connections with Publish state.
func RegistrySize() int { return states.size() }
