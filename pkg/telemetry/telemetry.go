// Package telemetry sets up OpenTelemetry tracing. Every request gets a
// trace context, propagated as W3C trace context between processes, so logs
// carry trace and span ids in every case. Spans are recorded and exported
// over OTLP/gRPC only when OTEL_EXPORTER_OTLP_ENDPOINT (or the traces
// variant) is set; the standard OTEL_* variables, OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG included, are honoured by the SDK. Without an
// exporter nothing would read a recorded span, so none is recorded: the
// sampler keeps the ids and drops the spans, which costs no allocation of
// attributes, events or span data on the request path.
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

// Exporting reports whether the environment names an OTLP trace endpoint.
func Exporting() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs the global tracer provider and propagator for service and
// returns a function that flushes and stops it.
func Setup(ctx context.Context, service, version string) (func(context.Context) error, error) {
	res := resource.NewSchemaless(
		semconv.ServiceName("vulnscan-"+service),
		semconv.ServiceVersion(version),
	)
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if Exporting() {
		exp, err := otlptracegrpc.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("otlp trace exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	} else {
		opts = append(opts, sdktrace.WithSampler(sdktrace.NeverSample()))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp.Shutdown, nil
}
