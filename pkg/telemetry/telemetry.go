// Package telemetry sets up OpenTelemetry tracing. Spans are always created
// and propagated (W3C trace context), so logs carry trace ids; they are
// exported over OTLP/gRPC only when OTEL_EXPORTER_OTLP_ENDPOINT (or the traces
// variant) is set, and the standard OTEL_* variables are honoured by the SDK.
package telemetry

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
)

// Setup installs the global tracer provider and propagator for service and
// returns a function that flushes and stops it.
func Setup(ctx context.Context, service, version string) (func(context.Context) error, error) {
	res := resource.NewSchemaless(
		semconv.ServiceName("vulnscan-"+service),
		semconv.ServiceVersion(version),
	)
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		exp, err := otlptracegrpc.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("otlp trace exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp.Shutdown, nil
}
