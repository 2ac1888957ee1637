package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func TestExporting(t *testing.T) {
	tests := []struct {
		name           string
		endpoint       string
		tracesEndpoint string
		want           bool
	}{
		{"neither", "", "", false},
		{"general endpoint", "http://127.0.0.1:4317", "", true},
		{"traces endpoint", "", "http://127.0.0.1:4317", true},
		{"both", "http://127.0.0.1:4317", "http://127.0.0.1:4318", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", tt.endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", tt.tracesEndpoint)
			if got := Exporting(); got != tt.want {
				t.Errorf("Exporting() = %v, want %v", got, tt.want)
			}
		})
	}
}

// With an endpoint configured, spans are recorded and carry the service's
// resource attributes. The endpoint is a loopback port nobody listens on;
// the exporter connects lazily, and the span is never ended, so nothing is
// sent.
func TestExporterRecordsSpansWithResource(t *testing.T) {
	tests := []struct {
		name string
		env  string
	}{
		{"general endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{"traces endpoint", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
			t.Setenv(tt.env, "http://127.0.0.1:1")
			shutdown, err := Setup(context.Background(), "scan", "v1.2.3")
			if err != nil {
				t.Fatalf("Setup: %v", err)
			}
			defer func() { _ = shutdown(context.Background()) }()

			_, span := otel.Tracer("t").Start(context.Background(), "op")
			if !span.IsRecording() {
				t.Fatal("span is not recorded although an exporter is configured")
			}
			ro, ok := span.(sdktrace.ReadOnlySpan)
			if !ok {
				t.Fatalf("span %T is not an SDK span", span)
			}
			attrs := map[attribute.Key]string{}
			for _, kv := range ro.Resource().Attributes() {
				attrs[kv.Key] = kv.Value.String()
			}
			if attrs["service.name"] != "vulnscan-scan" {
				t.Errorf("service.name = %q, want vulnscan-scan", attrs["service.name"])
			}
			if attrs["service.version"] != "v1.2.3" {
				t.Errorf("service.version = %q, want v1.2.3", attrs["service.version"])
			}
		})
	}
}

// The installed propagator carries baggage as well as the trace context.
func TestPropagatesBaggage(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	shutdown, err := Setup(context.Background(), "gateway", "v0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = shutdown(context.Background()) }()

	m, err := baggage.NewMember("tenant", "acme")
	if err != nil {
		t.Fatal(err)
	}
	b, err := baggage.New(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx := baggage.ContextWithBaggage(context.Background(), b)
	carrier := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, carrier)
	if carrier["baggage"] != "tenant=acme" {
		t.Fatalf("baggage header = %q, want tenant=acme", carrier["baggage"])
	}
	got := baggage.FromContext(otel.GetTextMapPropagator().Extract(context.Background(), carrier))
	if v := got.Member("tenant").Value(); v != "acme" {
		t.Fatalf("extracted tenant = %q, want acme", v)
	}
}
