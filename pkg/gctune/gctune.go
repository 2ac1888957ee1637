// Package gctune sets the garbage collector target of the request-serving
// processes (the gateway, auth and findings) when the environment leaves it
// to them.
//
// Their live heaps are small (tens of MiB) and their allocations are almost
// all per request, so at Go's default GOGC=100 they collect many times a
// second under load, and the collector's marking and the allocation assists
// it imposes cost a measurable share of each request's CPU. DefaultPercent
// lets the heap grow to five times what is live between collections. Memory
// stays bounded where it matters: the deployments set GOMEMLIMIT from the
// container's memory limit, and the runtime collects sooner as the heap
// nears it, whatever GOGC says.
package gctune

import (
	"runtime/debug"
	"strings"
)

// DefaultPercent is the GOGC value used when the GOGC variable is unset.
const DefaultPercent = 400

// Apply sets the collector's target to DefaultPercent unless GOGC is set,
// in which case the runtime has already applied it and it is left alone.
// lookup reads the environment (os.LookupEnv). It returns the target now in
// effect (negative when collection is off).
func Apply(lookup func(string) (string, bool)) int {
	if v, ok := lookup("GOGC"); ok && strings.TrimSpace(v) != "" {
		current := debug.SetGCPercent(100)
		debug.SetGCPercent(current)
		return current
	}
	debug.SetGCPercent(DefaultPercent)
	return DefaultPercent
}
