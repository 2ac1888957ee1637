package systest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// SlowSite is a live target that keeps a scan running: it answers every
// page only after 15 s (inside the scanner's 20 s request timeout), with
// links to two more pages, until released. It tells when a request
// arrives and when the scanner abandons one, which only a cancelled scan
// does.
type SlowSite struct {
	URL string
	// Arrived receives a value as each request arrives.
	Arrived chan struct{}
	// Aborted receives a value for each request the client gave up.
	Aborted chan struct{}

	hits    atomic.Int32
	release chan struct{}
	once    sync.Once
}

// NewSlowSite starts a slow site on loopback, closed with the test.
func NewSlowSite(t testing.TB) *SlowSite {
	s := &SlowSite{Arrived: make(chan struct{}, 1000), Aborted: make(chan struct{}, 1000), release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.hits.Add(1)
		notify(s.Arrived)
		w.Header().Set("Content-Type", "text/html")
		select {
		case <-s.release:
			fmt.Fprint(w, `<html><body>done</body></html>`)
		case <-r.Context().Done():
			notify(s.Aborted)
		case <-time.After(15 * time.Second):
			fmt.Fprintf(w, `<html><body><a href="/p%d">next</a> <a href="/q%d">other</a></body></html>`, n, n)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(s.Release) // before the server closes: no request is left held
	s.URL = srv.URL + "/"
	return s
}

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Hits is how many requests the site has received.
func (s *SlowSite) Hits() int32 { return s.hits.Load() }

// Release makes the site answer every request at once, with no links.
func (s *SlowSite) Release() { s.once.Do(func() { close(s.release) }) }

// Await waits for a value on c, and fails the test with the system's log
// when none comes within timeout.
func (s *System) Await(t testing.TB, c <-chan struct{}, timeout time.Duration, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(timeout):
		t.Fatalf("%s did not happen within %s\n%s", what, timeout, s.Tail(120))
	}
}
