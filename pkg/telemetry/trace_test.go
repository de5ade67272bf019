package telemetry

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestHTTPTransport: an upstream call becomes a client span of the
// caller's trace, the request the exchange receives carries that span as
// its traceparent, and the caller's request is left as it was.
func TestHTTPTransport(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTracerProvider(prevTP); otel.SetTextMapPropagator(prevProp) })

	var sent *http.Request
	status := http.StatusOK
	rt := HTTPTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = r
		if status == 0 {
			return nil, errors.New("connection refused")
		}
		return &http.Response{StatusCode: status, Body: http.NoBody, Request: r}, nil
	}))

	ctx, parent := tp.Tracer("test").Start(context.Background(), "caller")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://fapi.example/fapi/v1/ticker", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	parent.End()
	if req.Header.Get("traceparent") != "" {
		t.Error("the caller's request was changed")
	}
	ended := spans.Ended()
	if len(ended) != 2 || ended[0].Name() != "upstream GET /fapi/v1/ticker" {
		t.Fatalf("spans = %v", ended)
	}
	up := ended[0]
	if up.Parent().SpanID() != parent.SpanContext().SpanID() || up.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Error("the upstream span is not a child of the caller's span")
	}
	want := "00-" + up.SpanContext().TraceID().String() + "-" + up.SpanContext().SpanID().String() + "-01"
	if got := sent.Header.Get("traceparent"); got != want {
		t.Errorf("upstream traceparent = %q, want %q", got, want)
	}

	for _, tc := range []struct {
		name   string
		status int
		code   codes.Code
	}{
		{"server error", http.StatusBadGateway, codes.Error},
		{"client error is the exchange's answer", http.StatusBadRequest, codes.Unset},
		{"transport error", 0, codes.Error},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status = tc.status
			before := len(spans.Ended())
			_, err := rt.RoundTrip(req)
			if (err != nil) != (tc.status == 0) {
				t.Fatalf("err = %v", err)
			}
			got := spans.Ended()[before:]
			if len(got) != 1 || got[0].Status().Code != tc.code || !strings.HasPrefix(got[0].Name(), "upstream GET") {
				t.Errorf("span = %+v, want status %v", got, tc.code)
			}
		})
	}
}

// TestStartServerSpan: without a tracer provider a request without a
// traceparent gets a no-op span and its context back unchanged, while an
// inbound traceparent still flows on; with a provider every request gets
// a recorded span.
func TestStartServerSpan(t *testing.T) {
	prevProp := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prevProp) })
	name := func() string { return "edge /v1" }

	ctx := context.Background()
	got, span := StartServerSpan(ctx, http.Header{}, name)
	if got != ctx || span.IsRecording() || span.SpanContext().IsValid() {
		t.Errorf("no provider, no traceparent: ctx changed or span %v recording", span.SpanContext())
	}
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	got, span = StartServerSpan(ctx, http.Header{"Traceparent": {parent}}, name)
	if id := span.SpanContext().TraceID().String(); id != "4bf92f3577b34da6a3ce929d0e0e4736" || got == ctx {
		t.Errorf("no provider, inbound traceparent: trace id %s, want the caller's", id)
	}

	spans := tracetest.NewSpanRecorder()
	prevTP := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	t.Cleanup(func() { otel.SetTracerProvider(prevTP) })
	_, span = StartServerSpan(ctx, http.Header{}, name)
	span.End()
	if ended := spans.Ended(); len(ended) != 1 || ended[0].Name() != "edge /v1" {
		t.Errorf("with a provider: spans %v, want one named edge /v1", ended)
	}
}
