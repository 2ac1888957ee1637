package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/vulnscan/vulnscan/gateway/internal/httperr"
	"github.com/vulnscan/vulnscan/gateway/internal/keyauth"
	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/redistest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
)

// errorBody decodes the spec's error body of a response and checks its
// shape.
func errorBody(t *testing.T, w *httptest.ResponseRecorder) httperr.Body {
	t.Helper()
	require.Equal(t, "application/json; charset=utf-8", w.Header().Get("Content-Type"))
	var b httperr.Body
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &b), w.Body.String())
	require.Equal(t, w.Code, b.StatusCode)
	require.Equal(t, http.StatusText(w.Code), b.Error)
	return b
}

func ok200(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }

// Each request gets a fresh UUID the gateway chose, in X-Request-Id and in
// the context the services see; a client's id is never adopted, only logged
// after sanitizing.
func TestRequestIDAndAccessLogLine(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	var seenID string
	var seenMethod any
	h := requestID(accessLog(logging.New(&out, "gateway"), noop.NewTracerProvider().Tracer("t"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seenID = logging.RequestID(r.Context())
		seenMethod = r.Context().Value(requestMethodKey{})
		if r.URL.Path == "/v1/missing" {
			httperr.Write(w, http.StatusNotFound, "nope")
			return
		}
		_, _ = w.Write([]byte("hello"))
	})))

	for _, tc := range []struct {
		name, method, path, clientID string
		status, bytes                int
		logged                       bool
		wantClientID                 string
	}{
		{"plain GET", http.MethodGet, "/v1/credits", "", 200, 5, true, ""},
		{"client id is sanitized", http.MethodPost, "/v1/scans", "evil\n\"id\"=1", 200, 5, true, "evilid1"},
		{"error status", http.MethodGet, "/v1/missing", "", 404, -1, true, ""},
		{"liveness is not logged", http.MethodGet, "/healthz", "", 200, 5, false, ""},
		{"readiness is not logged", http.MethodGet, "/readyz", "", 200, 5, false, ""},
	} {
		out.Reset()
		r := httptest.NewRequest(tc.method, tc.path, nil)
		r.RemoteAddr = "198.51.100.7:4242"
		if tc.clientID != "" {
			r.Header.Set("X-Request-Id", tc.clientID)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		id := w.Header().Get("X-Request-Id")
		_, err := uuid.Parse(id)
		require.NoError(t, err, tc.name)
		require.NotEqual(t, tc.clientID, id, tc.name)
		require.Equal(t, id, seenID, tc.name)
		require.Equal(t, tc.method, seenMethod, tc.name)
		if !tc.logged {
			require.Empty(t, out.String(), tc.name)
			continue
		}
		var line map[string]any
		require.NoError(t, json.Unmarshal(out.Bytes(), &line), "%s: one JSON line: %s", tc.name, out.String())
		require.Equal(t, "http", line["msg"], tc.name)
		require.Equal(t, "INFO", line["level"], tc.name)
		require.Contains(t, line, "time", tc.name)
		require.Equal(t, tc.method, line["method"], tc.name)
		require.Equal(t, tc.path, line["path"], tc.name)
		require.EqualValues(t, tc.status, line["status"], tc.name)
		if tc.bytes >= 0 {
			require.EqualValues(t, tc.bytes, line["bytes"], tc.name)
		}
		require.Equal(t, "198.51.100.7:4242", line["remote"], tc.name)
		require.Contains(t, line, "duration_ms", tc.name)
		require.Equal(t, id, line["request_id"], tc.name)
		if tc.wantClientID != "" {
			require.Equal(t, tc.wantClientID, line["client_request_id"], tc.name)
		} else {
			require.NotContains(t, line, "client_request_id", tc.name)
		}
		for _, never := range []string{"X-Request-Id", "headers", "body"} {
			require.NotContains(t, line, never, tc.name)
		}
	}
}

func TestDropTraceHeaders(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	for _, k := range untrustedTraceHeaders {
		h.Set(k, "x")
	}
	h.Set("X-Api-Key", "kept")
	h.Set("Content-Type", "application/json")
	dropTraceHeaders(h)
	require.Equal(t, http.Header{"X-Api-Key": {"kept"}, "Content-Type": {"application/json"}}, h)
}

// authClient answers VerifyAPIKey from a table of key hashes, or fails
// with err; other RPCs are not used by the middleware.
type authClient struct {
	authv1.AuthInternalServiceClient
	keys  map[string]*authv1.VerifyAPIKeyResponse
	err   error
	calls int
}

func (a *authClient) VerifyAPIKey(_ context.Context, in *authv1.VerifyAPIKeyRequest, _ ...grpc.CallOption) (*authv1.VerifyAPIKeyResponse, error) {
	a.calls++
	if a.err != nil {
		return nil, a.err
	}
	if r, ok := a.keys[in.GetKeyHash()]; ok {
		return r, nil
	}
	return &authv1.VerifyAPIKeyResponse{Status: "unknown"}, nil
}

func newKey(t *testing.T) (key, hash string) {
	t.Helper()
	key, _, hash, err := apikey.Generate()
	require.NoError(t, err)
	return key, hash
}

// authenticate answers every /v1 request without a usable key with 401 and
// the spec's message, and hands the principal of an active key on.
func TestAuthenticate(t *testing.T) {
	rdb := redistest.Client(t)
	active, activeHash := newKey(t)
	revoked, revokedHash := newKey(t)
	expired, expiredHash := newKey(t)
	lapsed, lapsedHash := newKey(t)
	unknown, _ := newKey(t)
	auth := &authClient{keys: map[string]*authv1.VerifyAPIKeyResponse{
		activeHash: {Status: string(vocab.KeyActive), KeyId: "k1", OrgId: "o1", UserId: "u1", Scopes: []string{"read"},
			ExpiresAt: timestamppb.New(time.Now().Add(time.Hour))},
		revokedHash: {Status: string(vocab.KeyRevoked), KeyId: "k2"},
		expiredHash: {Status: string(vocab.KeyExpired), KeyId: "k3"},
		lapsedHash:  {Status: string(vocab.KeyActive), KeyId: "k4", ExpiresAt: timestamppb.New(time.Now().Add(-time.Minute))},
	}}
	log := discardLog()
	v := keyauth.New(rdb, auth, log, time.Minute, 100)
	var got principal.Principal
	var reached bool
	h := authenticate(v, newBuckets(1.0/3600, 100, 100), log, counter("limited"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
		got, _ = principalFrom(r.Context())
		w.WriteHeader(http.StatusOK)
	}))

	for _, tc := range []struct {
		name    string
		path    string
		headers map[string]string
		code    int
		msg     string
	}{
		{"outside /v1 needs no key", "/healthz", nil, 200, ""},
		{"no key", "/v1/credits", nil, 401, msgMissingKey},
		{"bare /v1 needs a key", "/v1", nil, 401, msgMissingKey},
		{"bearer token instead of a key", "/v1/credits", map[string]string{"Authorization": "Bearer x"}, 401, msgSessionAuth},
		{"cookie instead of a key", "/v1/credits", map[string]string{"Cookie": "session=x"}, 401, msgSessionAuth},
		{"malformed key", "/v1/credits", map[string]string{"X-Api-Key": "vsk_short"}, 401, "Malformed API key"},
		{"unknown key", "/v1/credits", map[string]string{"X-Api-Key": unknown}, 401, "Invalid API key"},
		{"revoked key", "/v1/credits", map[string]string{"X-Api-Key": revoked}, 401, "API key has been revoked"},
		{"expired key", "/v1/credits", map[string]string{"X-Api-Key": expired}, 401, "API key has expired"},
		{"active key past its expiry", "/v1/credits", map[string]string{"X-Api-Key": lapsed}, 401, "API key has expired"},
		{"active key", "/v1/credits", map[string]string{"X-Api-Key": active}, 200, ""},
	} {
		reached, got = false, principal.Principal{}
		r := httptest.NewRequest(http.MethodGet, tc.path, nil)
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, tc.code, w.Code, tc.name)
		require.Equal(t, tc.code == 200, reached, tc.name)
		if tc.code != 200 {
			require.Equal(t, tc.msg, errorBody(t, w).Message, tc.name)
		}
	}
	require.Equal(t, principal.Principal{OrgID: "o1", UserID: "u1", KeyID: "k1", Scopes: []string{"read"}}, got)

	// When the auth service cannot answer (and Redis holds nothing), the
	// request is refused as unavailable, not as unauthenticated.
	auth.err = status.Error(codes.Unavailable, "down")
	other, _ := newKey(t)
	r := httptest.NewRequest(http.MethodGet, "/v1/credits", nil)
	r.Header.Set("X-Api-Key", other)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	require.Equal(t, "Authentication is temporarily unavailable; retry later", errorBody(t, w).Message)
}

// A client address over its failed-authentication budget is answered 429
// before any lookup; malformed keys cost nothing; a key this replica holds
// as active still passes.
func TestAuthenticationFailureBudget(t *testing.T) {
	rdb := redistest.Client(t)
	active, activeHash := newKey(t)
	auth := &authClient{keys: map[string]*authv1.VerifyAPIKeyResponse{
		activeHash: {Status: string(vocab.KeyActive), KeyId: "k1", OrgId: "o1", Scopes: []string{"read"}},
	}}
	log := discardLog()
	limited := counter("limited")
	h := authenticate(keyauth.New(rdb, auth, log, time.Minute, 100), newBuckets(1.0/3600, 2, 100), log, limited)(http.HandlerFunc(ok200))
	do := func(key, addr string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/v1/credits", nil)
		r.RemoteAddr = addr
		r.Header.Set("X-Api-Key", key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	const guesser, bystander = "203.0.113.9:1000", "203.0.113.10:1000"
	require.Equal(t, 200, do(active, guesser).Code) // now held locally

	for range 5 {
		require.Equal(t, 401, do("vsk_malformed", guesser).Code)
	}
	for i := range 2 {
		g, _ := newKey(t)
		require.Equal(t, 401, do(g, guesser).Code, "guess %d is within budget", i)
	}
	calls := auth.calls
	g, _ := newKey(t)
	w := do(g, "203.0.113.9:2000") // another port of the same address
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	require.Equal(t, msgAuthFailures, errorBody(t, w).Message)
	require.NotEmpty(t, w.Header().Get("Retry-After"))
	require.Equal(t, calls, auth.calls, "no lookup for an address over budget")
	require.InDelta(t, 1, testutil.ToFloat64(limited), 0)

	require.Equal(t, 200, do(active, guesser).Code, "a key held as active passes")
	require.Equal(t, 401, do(g, bystander).Code, "another address has its own budget")
}

func TestRequireScope(t *testing.T) {
	t.Parallel()
	h := requireScope(http.HandlerFunc(ok200))
	read, write := []string{"read"}, []string{"write"}
	for _, tc := range []struct {
		name   string
		method string
		scopes []string
		anon   bool
		code   int
		msg    string
	}{
		{"GET with read", http.MethodGet, read, false, 200, ""},
		{"HEAD with read", http.MethodHead, read, false, 200, ""},
		{"GET with write (write includes read)", http.MethodGet, write, false, 200, ""},
		{"GET with an unrelated scope", http.MethodGet, []string{"admin"}, false, 403, "API key missing required scope: read"},
		{"POST with read only", http.MethodPost, read, false, 403, msgMissingScope},
		{"DELETE with read only", http.MethodDelete, read, false, 403, msgMissingScope},
		{"PATCH with write", http.MethodPatch, write, false, 200, ""},
		{"POST with both", http.MethodPost, []string{"read", "write"}, false, 200, ""},
		{"no scopes at all", http.MethodGet, nil, false, 403, "API key missing required scope: read"},
		{"no principal (outside /v1)", http.MethodPost, nil, true, 200, ""},
	} {
		r := httptest.NewRequest(tc.method, "/v1/scans", nil)
		if !tc.anon {
			r = r.WithContext(context.WithValue(r.Context(), principalKey, principal.Principal{KeyID: "k", Scopes: tc.scopes}))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, tc.code, w.Code, tc.name)
		if tc.code != 200 {
			require.Equal(t, tc.msg, errorBody(t, w).Message, tc.name)
		}
	}
}

// Bodies over the cap are refused up front when their length is declared
// and flagged for a 413 when they are streamed; uploads have their own cap.
func TestLimitBodies(t *testing.T) {
	t.Parallel()
	var read []byte
	var readErr error
	var hit bool
	h := limitBodies(10, bodyRate{window: time.Hour, min: 1}, counter("cut"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		read, readErr = io.ReadAll(r.Body)
		hit = bodyLimitHit(r.Context())
		w.WriteHeader(http.StatusOK)
	}))
	for _, tc := range []struct {
		name    string
		path    string
		body    string
		length  int64 // -1: streamed without a length
		code    int
		hit     bool
		reached bool
	}{
		{"within the cap", "/v1/scans", "0123456789", 10, 200, false, true},
		{"declared over the cap", "/v1/scans", "0123456789a", 11, 413, false, false},
		{"streamed over the cap", "/v1/scans", strings.Repeat("a", 64), -1, 200, true, true},
		{"streamed within the cap", "/v1/scans", "short", -1, 200, false, true},
		{"upload path takes more", uploadPath, strings.Repeat("u", 64), 64, 200, false, true},
		{"empty body", "/v1/scans", "", 0, 200, false, true},
	} {
		read, readErr, hit = nil, nil, false
		r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
		r.ContentLength = tc.length
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, tc.code, w.Code, tc.name)
		require.Equal(t, tc.hit, hit, tc.name)
		if !tc.reached {
			require.Equal(t, "Request body too large", errorBody(t, w).Message, tc.name)
			require.Nil(t, read, tc.name)
			continue
		}
		if tc.hit {
			var mbe *http.MaxBytesError
			require.True(t, errors.As(readErr, &mbe), tc.name)
			require.Len(t, read, 10, tc.name)
		} else {
			require.NoError(t, readErr, tc.name)
			require.Equal(t, tc.body, string(read), tc.name)
		}
	}
}

// serviceError renders every failure in the spec's body: the service's own
// 4xx messages pass, decoding errors name the field without internals, and
// 5xx never leak what failed.
func TestServiceErrorRendering(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	g := &Gateway{log: slog.New(slog.NewJSONHandler(&logged, nil))}
	hitCtx := func(hit, slow bool) context.Context {
		ctx := context.WithValue(context.Background(), bodyLimitKey, &hit)
		return context.WithValue(ctx, bodySlowKey, &slow)
	}
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		err     error
		code    int
		msg     string
		written bool
	}{
		{"not found keeps its message", context.Background(), status.Error(codes.NotFound, "Scan not found"), 404, "Scan not found", true},
		{"unknown field", context.Background(), status.Error(codes.InvalidArgument, `proto: (line 1:2): unknown field "colour"`), 400, `Unknown field "colour"`, true},
		{"syntax error", context.Background(), status.Error(codes.InvalidArgument, "proto: syntax error (line 1:1): unexpected token"), 400, "Malformed JSON body", true},
		{"truncated body", context.Background(), status.Error(codes.InvalidArgument, "unexpected EOF"), 400, "Malformed JSON body", true},
		{"bad field value", context.Background(), status.Error(codes.InvalidArgument, `parsing field "limit": strconv.ParseInt: invalid`), 400, "limit has an invalid value", true},
		{"plain validation message", context.Background(), status.Error(codes.InvalidArgument, "repos: expected an array"), 400, "repos: expected an array", true},
		{"internal hides the cause", context.Background(), status.Error(codes.Internal, "pq: relation missing"), 500, "Internal server error", true},
		{"unknown hides the cause", context.Background(), errors.New("boom"), 500, "Internal server error", true},
		{"unavailable", context.Background(), status.Error(codes.Unavailable, "connection refused"), 503, "Service temporarily unavailable; retry later", true},
		{"deadline", context.Background(), status.Error(codes.DeadlineExceeded, "slow"), 503, "Service temporarily unavailable; retry later", true},
		{"body over the cap", hitCtx(true, false), status.Error(codes.InvalidArgument, "unexpected EOF"), 413, "Request body too large", true},
		{"body too slow", hitCtx(false, true), status.Error(codes.InvalidArgument, "unexpected EOF"), 408, msgTooSlow, true},
		{"client went away", context.Background(), status.Error(codes.Canceled, "context canceled"), 0, "", false},
	} {
		logged.Reset()
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/v1/scans", nil).WithContext(tc.ctx)
		g.serviceError(r.Context(), nil, nil, w, r, tc.err)
		if !tc.written {
			require.Empty(t, w.Body.String(), tc.name)
			continue
		}
		require.Equal(t, tc.code, w.Code, tc.name)
		require.Equal(t, tc.msg, errorBody(t, w).Message, tc.name)
		if tc.code >= 500 {
			require.Contains(t, logged.String(), "request failed", tc.name)
		} else {
			require.Empty(t, logged.String(), tc.name)
		}
	}
}

func TestRoutingError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, path string
		code         int
		msg          string
	}{
		{http.MethodDelete, "/v1/credits", 405, "Method DELETE not allowed on /v1/credits"},
		{http.MethodGet, "/v1/nothing", 404, "Cannot GET /v1/nothing"},
		{http.MethodGet, "/v1/x", 406, "Not Acceptable"},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(tc.method, tc.path, nil)
		routingError(r.Context(), nil, nil, w, r, tc.code)
		require.Equal(t, tc.code, w.Code)
		require.Equal(t, tc.msg, errorBody(t, w).Message)
	}
}

// A POST answers 201 unless it acts on an existing resource (200) or queues
// a redelivery (202); a DELETE answers 204; other methods keep 200.
func TestSuccessStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method string
		msg    proto.Message
		code   int
	}{
		{http.MethodPost, &scanv1.CreateScanResponse{}, 201},
		{http.MethodPost, &scanv1.CancelScanResponse{}, 200},
		{http.MethodPost, &findingsv1.BulkUpdateFindingsResponse{}, 200},
		{http.MethodPost, &findingsv1.WebhookDelivery{}, 202},
		{http.MethodDelete, &findingsv1.WebhookDelivery{}, 204},
		{http.MethodGet, &scanv1.CreateScanResponse{}, 200},
		{http.MethodPatch, &scanv1.CreateScanResponse{}, 200},
		{"", &scanv1.CreateScanResponse{}, 200}, // no method recorded
	} {
		ctx := context.Background()
		if tc.method != "" {
			ctx = context.WithValue(ctx, requestMethodKey{}, tc.method)
		}
		w := httptest.NewRecorder()
		require.NoError(t, successStatus(ctx, w, tc.msg))
		require.Equal(t, tc.code, w.Code, "%s %T", tc.method, tc.msg)
	}
}
