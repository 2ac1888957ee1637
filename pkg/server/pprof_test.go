package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The profiling endpoints are mounted only when VULNSCAN_PPROF asks for
// them.
func TestMountPprof(t *testing.T) {
	for _, c := range []struct {
		env  string
		want int
	}{{"", http.StatusNotFound}, {"false", http.StatusNotFound}, {"1", http.StatusOK}, {"true", http.StatusOK}} {
		t.Setenv("VULNSCAN_PPROF", c.env)
		mux := http.NewServeMux()
		MountPprof(mux)
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/allocs", "/debug/pprof/heap"} {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code != c.want {
				t.Errorf("VULNSCAN_PPROF=%q: GET %s answered %d, want %d", c.env, path, rec.Code, c.want)
			}
		}
	}
}
