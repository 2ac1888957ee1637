package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/redistest"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// fakeInbound records the events the gateway forwards; a body "refuse" is
// refused as a bad signature.
type fakeInbound struct {
	findingsv1.UnimplementedFindingsInboundServiceServer
	mu  sync.Mutex
	got []*findingsv1.HandleEventRequest
}

func (f *fakeInbound) HandleEvent(_ context.Context, req *findingsv1.HandleEventRequest) (*findingsv1.HandleEventResponse, error) {
	f.mu.Lock()
	f.got = append(f.got, req)
	f.mu.Unlock()
	if string(req.GetBody()) == "refuse" {
		return nil, apierr.Unauthenticated("Invalid signature: X-Hub-Signature-256 does not match the body")
	}
	return &findingsv1.HandleEventResponse{Status: "recorded", FindingId: "f", Text: "ok"}, nil
}

func (f *fakeInbound) requests() []*findingsv1.HandleEventRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*findingsv1.HandleEventRequest(nil), f.got...)
}

// The inbound route needs no API key, forwards exactly the signature
// headers and the raw body, caps bodies at 1 MiB and rate-limits each
// integration on its own.
func TestInboundRoute(t *testing.T) {
	t.Parallel()
	fake := &fakeInbound{}
	srv := grpc.NewServer()
	findingsv1.RegisterFindingsInboundServiceServer(srv, fake)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	g := &Gateway{conns: map[string]*grpc.ClientConn{"findings": cc}, log: log}
	limited := prometheus.NewCounter(prometheus.CounterOpts{Name: "limited"})
	h := g.inboundHandler(newLeases(redistest.Client(t), 1.0/3600, 2),
		newBuckets(1, 2, 100), newBuckets(1000, 1000, 100), log, limited)
	mux := http.NewServeMux()
	mux.Handle(inboundPattern, h)

	post := func(path string, hdr map[string]string, body []byte) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	errBody := func(t *testing.T, rec *httptest.ResponseRecorder, status int, msg string) {
		t.Helper()
		require.Equal(t, status, rec.Code, "%s", rec.Body)
		var m map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m))
		require.EqualValues(t, status, m["statusCode"])
		require.Contains(t, m["message"], msg)
	}

	gh := uuid.NewString()
	rec := post("/v1/integrations/"+gh+"/events/github", map[string]string{"X-Hub-Signature-256": "sha256=ab", "X-GitHub-Event": "issue_comment",
		"X-GitHub-Delivery": "d-1", "Content-Type": "application/json", "X-Slack-Signature": "not forwarded"}, []byte(`{"a":1}`))
	require.Equal(t, 200, rec.Code, "%s", rec.Body)
	require.Contains(t, rec.Body.String(), `"status":"recorded"`)
	got := fake.requests()[0]
	require.Equal(t, gh, got.GetIntegrationId())
	require.Equal(t, "github", got.GetProvider())
	require.Equal(t, "sha256=ab", got.GetSignature())
	require.Equal(t, "issue_comment", got.GetEvent())
	require.Equal(t, "d-1", got.GetDelivery())
	require.Equal(t, `{"a":1}`, string(got.GetBody()))

	// The service's refusal is rendered in the spec's body.
	errBody(t, post("/v1/integrations/"+gh+"/events/github", nil, []byte("refuse")), 401, "does not match")
	// The integration's burst (2) is spent: the next request is limited
	// before it reaches the service.
	n := len(fake.requests())
	rec = post("/v1/integrations/"+gh+"/events/github", nil, []byte(`{}`))
	errBody(t, rec, 429, "Rate limit exceeded")
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
	require.Len(t, fake.requests(), n)

	// Another integration has its own budget; the chat's headers are forwarded.
	sl := uuid.NewString()
	rec = post("/v1/integrations/"+sl+"/events/slack", map[string]string{"X-Slack-Signature": "v0=cd", "X-Slack-Request-Timestamp": "123",
		"Content-Type": "application/x-www-form-urlencoded"}, []byte("text=x"))
	require.Equal(t, 200, rec.Code, "%s", rec.Body)
	got = fake.requests()[len(fake.requests())-1]
	require.Equal(t, "slack", got.GetProvider())
	require.Equal(t, "v0=cd", got.GetSignature())
	require.Equal(t, "123", got.GetTimestamp())
	require.Equal(t, "application/x-www-form-urlencoded", got.GetContentType())

	n = len(fake.requests())
	errBody(t, post("/v1/integrations/"+uuid.NewString()+"/events/github", nil, []byte(strings.Repeat("x", MaxInboundBody+1))), 413, "too large")
	errBody(t, post("/v1/integrations/nope/events/github", nil, []byte(`{}`)), 400, "integration_id must be a UUID")
	errBody(t, post("/v1/integrations/"+uuid.NewString()+"/events/teams", nil, []byte(`{}`)), 404, "github or slack")
	require.Len(t, fake.requests(), n, "refused requests never reach the service")
}
