package gateway

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/vulnscan/vulnscan/pkg/logging"
)

func TestAccessLogTracesEachRequestAsANewRoot(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	var out bytes.Buffer
	log := logging.New(&out, "gateway")

	var seen trace.SpanContext
	var headers http.Header
	h := accessLog(log, tp.Tracer("t"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, headers = trace.SpanContextFromContext(r.Context()), r.Header.Clone()
		if r.URL.Path == "/v1/boom" {
			w.WriteHeader(http.StatusBadGateway)
		}
	}))

	const inbound = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	req := httptest.NewRequest(http.MethodGet, "/v1/credits", nil)
	req.Header.Set("Traceparent", inbound)
	req.Header.Set("Baggage", "tenant=victim")
	h.ServeHTTP(httptest.NewRecorder(), req)

	require.True(t, seen.IsValid())
	require.NotEqual(t, "0af7651916cd43dd8448eb211c80319c", seen.TraceID().String(), "the client's trace is not adopted")
	require.Empty(t, headers.Get("Traceparent"))
	require.Empty(t, headers.Get("Baggage"))
	ended := spans.Ended()
	require.Len(t, ended, 1)
	s := ended[0]
	require.Equal(t, "GET /v1/credits", s.Name())
	require.Equal(t, trace.SpanKindServer, s.SpanKind())
	require.False(t, s.Parent().IsValid(), "a new root")
	require.Len(t, s.Links(), 1)
	require.Equal(t, "0af7651916cd43dd8448eb211c80319c", s.Links()[0].SpanContext.TraceID().String())
	require.Contains(t, s.Attributes(), attribute.Int("http.response.status_code", 200))
	require.Contains(t, out.String(), seen.TraceID().String(), "the access log names the span's trace")

	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v1/boom", nil))
	ended = spans.Ended()
	require.Len(t, ended, 2)
	require.Empty(t, ended[1].Links(), "no traceparent, no link")
	require.Equal(t, codes.Error, ended[1].Status().Code)

	out.Reset()
	req = httptest.NewRequest(http.MethodGet, "/healthz", nil)
	req.Header.Set("Traceparent", inbound)
	h.ServeHTTP(httptest.NewRecorder(), req)
	require.Len(t, spans.Ended(), 2, "health checks are not traced")
	require.Empty(t, out.String(), "nor logged")
	require.Empty(t, headers.Get("Traceparent"))
}

func TestAccessLogRecordsNothingWithoutAnExporter(t *testing.T) {
	t.Parallel()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	var out bytes.Buffer
	var span trace.Span
	h := accessLog(slog.New(slog.NewJSONHandler(&out, nil)), tp.Tracer("t"))(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		span = trace.SpanFromContext(r.Context())
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v1/credits", nil))
	require.True(t, span.SpanContext().IsValid(), "ids for the logs in every case")
	require.False(t, span.IsRecording())
	require.Contains(t, out.String(), `"path":"/v1/credits"`)
}
