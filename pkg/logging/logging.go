// Package logging builds the structured JSON logger every process uses. Each
// record carries the service name and, when the context has them, the trace
// id, span id and request id, so that a log line leads to its trace.
package logging

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

type ctxKey struct{}

// WithRequestID returns a context carrying the request id for log records.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// RequestID returns the request id stored by WithRequestID, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// New returns a JSON logger writing to w, at the level named by LOG_LEVEL.
func New(w io.Writer, service string) *slog.Logger {
	level := slog.LevelInfo
	switch strings.ToLower(os.Getenv("LOG_LEVEL")) {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})
	f, _ := w.(flusher)
	return slog.New(contextHandler{h, f}).With("service", service)
}

// contextHandler adds the context's trace, span and request ids, and
// flushes a batching destination after a record at warn level or above.
type contextHandler struct {
	slog.Handler
	flush flusher
}

func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	err := h.Handler.Handle(ctx, r)
	if h.flush != nil && r.Level >= slog.LevelWarn {
		if ferr := h.flush.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(attrs), h.flush}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name), h.flush}
}
