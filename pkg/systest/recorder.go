package systest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Call is one request a Recorder got, with the status it was answered.
type Call struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	Status       int
}

// JSON decodes the request body into a map (nil when it is not an object).
func (c Call) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(c.Body, &m)
	return m
}

// Answer chooses the answer to a request: its status and JSON body ("" for
// none). n counts the requests answered before it, failures aside.
type Answer func(c Call, n int) (status int, body string)

// Recorder is a loopback HTTP endpoint standing for a third party (a chat,
// a git host, an issue tracker, a webhook consumer): it records every
// request and answers it, and can be told to fail the next ones.
type Recorder struct {
	URL    string
	srv    *httptest.Server
	mu     sync.Mutex
	calls  []Call
	served int
	fail   int
	failAs int
}

// NewRecorder starts a recorder on 127.0.0.1, closed with the test;
// answer nil answers 204 with no body.
func NewRecorder(t testing.TB, answer Answer) *Recorder {
	r := &Recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		c := Call{Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone(), Body: body, Status: http.StatusNoContent}
		reply := ""
		r.mu.Lock()
		switch {
		case r.fail > 0:
			r.fail--
			c.Status, reply = r.failAs, `{"error":"down"}`
		case answer != nil:
			c.Status, reply = answer(c, r.served)
			r.served++
		default:
			r.served++
		}
		r.calls = append(r.calls, c)
		r.mu.Unlock()
		if reply != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(c.Status)
		_, _ = io.WriteString(w, reply)
	}))
	r.URL = r.srv.URL
	t.Cleanup(r.srv.Close)
	return r
}

// FailNext makes the recorder answer status to the next n requests.
func (r *Recorder) FailNext(n, status int) {
	r.mu.Lock()
	r.fail, r.failAs = n, status
	r.mu.Unlock()
}

// Calls returns every request so far, in arrival order.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// Succeeded returns the requests answered with a 2xx status.
func (r *Recorder) Succeeded() []Call {
	var out []Call
	for _, c := range r.Calls() {
		if c.Status < 300 {
			out = append(out, c)
		}
	}
	return out
}
