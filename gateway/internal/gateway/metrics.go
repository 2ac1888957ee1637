package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// unmatchedRoute labels requests for paths no route serves. Using the raw
// path would let any client grow the metrics without bound.
const unmatchedRoute = "unmatched"

// routeTable finds the route template of a request path ("/v1/findings/{id}"
// for "/v1/findings/4f…"). It is built from the OpenAPI document, which is
// generated from the same HTTP rules the gateway serves, plus the routes the
// gateway serves itself. Literal segments win over parameters, so
// "/v1/scans/{id}/findings/export" is never read as a finding route.
type routeTable struct {
	routes []route
}

type route struct {
	template string
	segments []string // "" stands for a parameter
	methods  map[string]bool
}

func newRouteTable(openapiJSON []byte, extra map[string][]string) (*routeTable, error) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openapiJSON, &doc); err != nil {
		return nil, fmt.Errorf("read OpenAPI paths: %w", err)
	}
	methods := map[string]map[string]bool{}
	add := func(path, method string) {
		if methods[path] == nil {
			methods[path] = map[string]bool{}
		}
		methods[path][strings.ToUpper(method)] = true
	}
	for path, ops := range doc.Paths {
		for m := range ops {
			if strings.HasPrefix(m, "x-") || m == "parameters" {
				continue
			}
			add(path, m)
		}
	}
	for path, ms := range extra {
		for _, m := range ms {
			add(path, m)
		}
	}
	t := &routeTable{}
	for path, ms := range methods {
		r := route{template: path, methods: ms}
		for _, s := range strings.Split(strings.Trim(path, "/"), "/") {
			if strings.HasPrefix(s, "{") {
				s = ""
			}
			r.segments = append(r.segments, s)
		}
		t.routes = append(t.routes, r)
	}
	// More literal segments first, then by template for a stable order.
	sort.Slice(t.routes, func(i, j int) bool {
		li, lj := literals(t.routes[i].segments), literals(t.routes[j].segments)
		if li != lj {
			return li > lj
		}
		return t.routes[i].template < t.routes[j].template
	})
	return t, nil
}

func literals(segs []string) int {
	n := 0
	for _, s := range segs {
		if s != "" {
			n++
		}
	}
	return n
}

// match returns the template serving path; allowed is false when the route
// exists but not for method.
func (t *routeTable) match(method, path string) (template string, allowed bool) {
	var buf [16]string
	segs := splitPath(path, buf[:0])
	for _, r := range t.routes {
		if len(r.segments) != len(segs) {
			continue
		}
		ok := true
		for i, s := range r.segments {
			if s == "" && segs[i] == "" || s != "" && s != segs[i] {
				ok = false
				break
			}
		}
		if ok {
			return r.template, r.methods[method] || method == http.MethodHead && r.methods[http.MethodGet]
		}
	}
	return unmatchedRoute, false
}

// splitPath appends path's segments (without leading and trailing slashes)
// to segs, as strings.Split(strings.Trim(path, "/"), "/") would return them
// but without allocating when segs has the room.
func splitPath(path string, segs []string) []string {
	path = strings.Trim(path, "/")
	for {
		i := strings.IndexByte(path, '/')
		if i < 0 {
			return append(segs, path)
		}
		segs = append(segs, path[:i])
		path = path[i+1:]
	}
}

// knownMethods keeps the method label bounded.
var knownMethods = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true}

// httpMetrics counts every response and its latency by route template,
// method and status. It wraps the whole handler, so answers written before
// a request reaches its route (401, 403, 413, 429) and routing errors (404,
// 405) are counted like the rest.
func httpMetrics(routes *routeTable, requests *prometheus.CounterVec, latency *prometheus.HistogramVec) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			code := rec.status
			if code == 0 {
				code = http.StatusOK
			}
			route, _ := routes.match(r.Method, r.URL.Path)
			method := r.Method
			if !knownMethods[method] {
				method = "OTHER"
			}
			requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
			latency.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
		})
	}
}

// uploadMetrics are the counters of POST /v1/uploads.
type uploadMetrics struct {
	total *prometheus.CounterVec
	bytes prometheus.Histogram
}

func newUploadMetrics(reg prometheus.Registerer) uploadMetrics {
	m := uploadMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_uploads_total",
			Help: "Archive uploads by response status."}, []string{"code"}),
		bytes: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gateway_upload_bytes",
			Help:    "Bytes of archive read per upload request, refused ones included.",
			Buckets: prometheus.ExponentialBuckets(1<<10, 4, 10)}), // 1 KiB … 256 MiB
	}
	reg.MustRegister(m.total, m.bytes)
	return m
}

// countingBody counts what a handler reads of a request body.
type countingBody struct {
	rc interface {
		Read([]byte) (int, error)
		Close() error
	}
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *countingBody) Close() error { return b.rc.Close() }

// bodyCapture keeps the start of a response body: an upload's answer is a
// small JSON object whose id and digest go into the upload's log line.
type bodyCapture struct {
	*statusRecorder
	head []byte
}

func (c *bodyCapture) Write(p []byte) (int, error) {
	if room := 4096 - len(c.head); room > 0 {
		c.head = append(c.head, p[:min(room, len(p))]...)
	}
	return c.statusRecorder.Write(p)
}

// observeUpload wraps the upload handler: one metric sample and one log
// line per upload, with the organization, the bytes read, the status and,
// when it was stored, the upload's id and SHA-256. The archive's content is
// never logged.
func (g *Gateway) observeUpload(m uploadMetrics, next func(http.ResponseWriter, *http.Request)) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		body := &countingBody{rc: r.Body}
		r.Body = body
		rec := &bodyCapture{statusRecorder: &statusRecorder{ResponseWriter: w}}
		next(rec, r)
		code := rec.status
		if code == 0 {
			code = http.StatusOK
		}
		m.total.WithLabelValues(strconv.Itoa(code)).Inc()
		m.bytes.Observe(float64(body.n))
		attrs := []any{"status", code, "bytes", body.n, "content_type", r.Header.Get("Content-Type"),
			"duration_ms", float64(time.Since(start).Microseconds()) / 1000}
		if p, ok := principalFrom(r.Context()); ok {
			attrs = append(attrs, "org_id", p.OrgID, "key_id", p.KeyID)
		}
		if code == http.StatusCreated {
			var up struct {
				ID     string `json:"id"`
				SHA256 string `json:"sha256"`
			}
			if json.Unmarshal(rec.head, &up) == nil {
				attrs = append(attrs, "upload_id", up.ID, "sha256", up.SHA256)
			}
		}
		g.log.InfoContext(r.Context(), "upload", attrs...)
	}
}
