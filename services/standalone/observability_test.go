package standalone

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestTracePropagation sends a request with a W3C traceparent and finds
// that one trace, as one tree of spans, in the edge, the keys service (the
// edge's key look-up and the connector's secret fetch), the connector and
// the upstream HTTP call, and in the edge's request log.
func TestTracePropagation(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
	})

	g := startGateway(t)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	body := []byte(`{"operation":"getMarkPrice","credentialId":"` + g.Bootstrap().CredentialID + `","market":"BTC"}`)
	req, _ := http.NewRequest(http.MethodPost, g.URL()+"/v1", bytes.NewReader(body))
	req.Header.Set("X-API-Key", g.Bootstrap().APIKey)
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	if r := g.do(req); r.status != 200 {
		t.Fatalf("call failed: %d %s", r.status, r.raw)
	}
	want := []string{"edge getMarkPrice paper", "keys perpgate.keys.apikey", "keys perpgate.keys.secret.paper", "connector paper getMarkPrice", "upstream GET"}
	var names []string
	var ids map[string]bool
	var inTrace []tracetest.SpanStub
	collect := func() error {
		names, ids, inTrace = nil, map[string]bool{"00f067aa0ba902b7": true}, nil // the caller's span
		for _, s := range exp.GetSpans() {
			if s.SpanContext.TraceID().String() == traceID {
				names = append(names, s.Name)
				ids[s.SpanContext.SpanID().String()] = true
				inTrace = append(inTrace, s)
			}
		}
		joined := strings.Join(names, " | ")
		for _, w := range want {
			if !strings.Contains(joined, w) {
				return fmt.Errorf("no span %q in trace %s; spans: %s", w, traceID, joined)
			}
		}
		return nil
	}
	// The edge and the connector end their spans after they have answered,
	// so the last ones may be recorded just after the response arrives.
	checkFor(t, 2*time.Second, 10*time.Millisecond, collect)
	// One tree: every span's parent is the caller's span or another span
	// of the trace, so no hop started a trace of its own under the same id.
	for _, s := range inTrace {
		if !ids[s.Parent.SpanID().String()] {
			t.Errorf("span %q has parent %s, outside the trace's spans", s.Name, s.Parent.SpanID())
		}
	}
	if !strings.Contains(g.logs.String(), `"trace_id":"`+traceID+`"`) {
		t.Error("the request log line does not carry the trace id")
	}
}

// TestMetricsEndpoint: /metrics exposes the request counter after a request.
func TestMetricsEndpoint(t *testing.T) {
	g := startGateway(t)
	g.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})
	resp, err := http.Get(g.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	want := `perpgate_requests_total{code="OK",exchange="paper",operation="getMarkPrice"} 1`
	if resp.StatusCode != 200 || !strings.Contains(string(text), want) {
		t.Fatalf("/metrics lacks %s:\n%.2000s", want, text)
	}
	if !strings.Contains(string(text), "perpgate_request_duration_seconds_bucket") {
		t.Fatal("/metrics lacks the latency histogram")
	}
}
