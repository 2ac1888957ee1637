package server

import (
	"net/http"
	"net/http/pprof"
	"os"
	"strconv"
)

// PprofEnabled reports whether VULNSCAN_PPROF asks for the profiling
// endpoints. They are off by default: a profile costs CPU while it runs and
// shows the process's internals, so an operator turns them on when needed.
func PprofEnabled() bool {
	on, _ := strconv.ParseBool(os.Getenv("VULNSCAN_PPROF"))
	return on
}

// MountPprof adds Go's profiling endpoints (/debug/pprof/…) to mux when
// PprofEnabled. Every process mounts them on its metrics listener only,
// never on a public or gRPC port.
func MountPprof(mux *http.ServeMux) {
	if !PprofEnabled() {
		return
	}
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
