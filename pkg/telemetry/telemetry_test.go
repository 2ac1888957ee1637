package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// Without an exporter, spans are not recorded but every trace still has
// valid ids, which propagate to the next process (so logs keep their trace
// ids); the next process follows the same trace.
func TestNoExporterKeepsIdsWithoutRecording(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	shutdown, err := Setup(context.Background(), "test", "v0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = shutdown(context.Background()) }()

	ctx, span := otel.Tracer("t").Start(context.Background(), "root")
	defer span.End()
	sc := span.SpanContext()
	if !sc.IsValid() {
		t.Fatal("the root span has no valid trace and span ids")
	}
	if span.IsRecording() {
		t.Fatal("a span is recorded although nothing exports it")
	}

	carrier := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, carrier)
	if carrier["traceparent"] == "" {
		t.Fatal("no traceparent propagated")
	}
	remote := otel.GetTextMapPropagator().Extract(context.Background(), carrier)
	_, child := otel.Tracer("t").Start(remote, "child")
	defer child.End()
	if child.SpanContext().TraceID() != sc.TraceID() {
		t.Fatalf("child trace %s, want %s", child.SpanContext().TraceID(), sc.TraceID())
	}
	if child.IsRecording() {
		t.Fatal("the child span is recorded")
	}
}
