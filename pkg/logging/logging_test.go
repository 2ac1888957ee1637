package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// records decodes the JSON lines written to buf.
func records(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestNewLevelFromEnv(t *testing.T) {
	tests := []struct {
		level string
		want  []string // messages that are written, in order
	}{
		{"", []string{"info", "warn", "error"}},
		{"debug", []string{"debug", "info", "warn", "error"}},
		{"DEBUG", []string{"debug", "info", "warn", "error"}},
		{"info", []string{"info", "warn", "error"}},
		{"warn", []string{"warn", "error"}},
		{"Error", []string{"error"}},
		{"nonsense", []string{"info", "warn", "error"}},
	}
	for _, tt := range tests {
		t.Run("level="+tt.level, func(t *testing.T) {
			t.Setenv("LOG_LEVEL", tt.level)
			var buf bytes.Buffer
			log := New(&buf, "svc")
			ctx := context.Background()
			log.DebugContext(ctx, "debug")
			log.InfoContext(ctx, "info")
			log.WarnContext(ctx, "warn")
			log.ErrorContext(ctx, "error")
			recs := records(t, &buf)
			var got []string
			for _, r := range recs {
				got = append(got, r["msg"].(string))
				if r["service"] != "svc" {
					t.Errorf("record %v has service %v, want svc", r["msg"], r["service"])
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("written = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestContextAttributes(t *testing.T) {
	traceID := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	spanID := trace.SpanID{0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 1, 2}
	withSpan := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled}))
	tests := []struct {
		name    string
		ctx     context.Context
		want    map[string]string
		missing []string
	}{
		{
			name:    "plain context",
			ctx:     context.Background(),
			missing: []string{"trace_id", "span_id", "request_id"},
		},
		{
			name:    "request id only",
			ctx:     WithRequestID(context.Background(), "req-1"),
			want:    map[string]string{"request_id": "req-1"},
			missing: []string{"trace_id", "span_id"},
		},
		{
			name:    "empty request id is left out",
			ctx:     WithRequestID(context.Background(), ""),
			missing: []string{"request_id"},
		},
		{
			name: "span only",
			ctx:  withSpan,
			want: map[string]string{
				"trace_id": "0102030405060708090a0b0c0d0e0f10",
				"span_id":  "0a0b0c0d0e0f0102",
			},
			missing: []string{"request_id"},
		},
		{
			name: "span and request id",
			ctx:  WithRequestID(withSpan, "req-2"),
			want: map[string]string{
				"trace_id":   "0102030405060708090a0b0c0d0e0f10",
				"span_id":    "0a0b0c0d0e0f0102",
				"request_id": "req-2",
			},
		},
		{
			name: "invalid span context is left out",
			ctx: trace.ContextWithSpanContext(context.Background(),
				trace.NewSpanContext(trace.SpanContextConfig{SpanID: spanID})),
			missing: []string{"trace_id", "span_id"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LOG_LEVEL", "")
			var buf bytes.Buffer
			New(&buf, "scan").InfoContext(tt.ctx, "hello", "k", "v")
			recs := records(t, &buf)
			if len(recs) != 1 {
				t.Fatalf("got %d records, want 1", len(recs))
			}
			r := recs[0]
			if r["msg"] != "hello" || r["k"] != "v" || r["service"] != "scan" {
				t.Errorf("record = %v", r)
			}
			for k, v := range tt.want {
				if r[k] != v {
					t.Errorf("%s = %v, want %q", k, r[k], v)
				}
			}
			for _, k := range tt.missing {
				if _, ok := r[k]; ok {
					t.Errorf("%s present (%v), want absent", k, r[k])
				}
			}
		})
	}
}

func TestWithAttrsAndGroupKeepServiceAndAttrs(t *testing.T) {
	t.Setenv("LOG_LEVEL", "")
	var buf bytes.Buffer
	log := New(&buf, "findings").With("scan_id", "s1").WithGroup("g")
	log.InfoContext(context.Background(), "grouped", "k", "v")
	recs := records(t, &buf)
	if len(recs) != 1 {
		t.Fatalf("got %d records, want 1", len(recs))
	}
	r := recs[0]
	if r["scan_id"] != "s1" || r["service"] != "findings" {
		t.Errorf("record = %v, want scan_id s1 and service findings", r)
	}
	g, ok := r["g"].(map[string]any)
	if !ok {
		t.Fatalf("group g missing from %v", r)
	}
	if g["k"] != "v" {
		t.Errorf("group g = %v, want k=v", g)
	}
}

func TestRequestIDRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"unset", context.Background(), ""},
		{"set", WithRequestID(context.Background(), "abc"), "abc"},
		{"overwritten", WithRequestID(WithRequestID(context.Background(), "a"), "b"), "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RequestID(tt.ctx); got != tt.want {
				t.Errorf("RequestID = %q, want %q", got, tt.want)
			}
		})
	}
}
