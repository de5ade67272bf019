package telemetry

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the counters and histograms every perpgate service reports,
// in one registry per process (no global state: tests and the standalone
// binary each own theirs).
type Metrics struct {
	Registry         *prometheus.Registry
	Requests         *prometheus.CounterVec   // perpgate_requests_total{operation,exchange,code}
	RequestDuration  *prometheus.HistogramVec // perpgate_request_duration_seconds{operation,exchange,code}
	RateLimited      *prometheus.CounterVec   // perpgate_rate_limit_rejections_total{tier}
	UpstreamDuration *prometheus.HistogramVec // perpgate_upstream_duration_seconds{exchange,operation}
	UpstreamErrors   *prometheus.CounterVec   // perpgate_upstream_errors_total{exchange,reason}
}

// NewMetrics registers the perpgate metrics and the Go runtime collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	buckets := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	m := &Metrics{
		Registry: reg,
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perpgate_requests_total", Help: "Requests answered by the edge, by operation, exchange and result code.",
		}, []string{"operation", "exchange", "code"}),
		RequestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "perpgate_request_duration_seconds", Help: "Edge latency from request to response.", Buckets: buckets,
		}, []string{"operation", "exchange", "code"}),
		RateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perpgate_rate_limit_rejections_total", Help: "Requests refused with RATE_LIMITED, by tier.",
		}, []string{"tier"}),
		UpstreamDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "perpgate_upstream_duration_seconds", Help: "Connector time per operation, including exchange calls.", Buckets: buckets,
		}, []string{"exchange", "operation"}),
		UpstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perpgate_upstream_errors_total", Help: "Operations that failed upstream, by exchange and reason.",
		}, []string{"exchange", "reason"}),
	}
	reg.MustRegister(m.Requests, m.RequestDuration, m.RateLimited, m.UpstreamDuration, m.UpstreamErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// ObserveRequest records one edge request.
func (m *Metrics) ObserveRequest(operation, exchange, code string, d time.Duration) {
	if m == nil {
		return
	}
	m.Requests.WithLabelValues(operation, exchange, code).Inc()
	m.RequestDuration.WithLabelValues(operation, exchange, code).Observe(d.Seconds())
}

// ObserveUpstream records one connector operation and, when reason is not
// empty, its upstream failure.
func (m *Metrics) ObserveUpstream(exchange, operation, reason string, d time.Duration) {
	if m == nil {
		return
	}
	m.UpstreamDuration.WithLabelValues(exchange, operation).Observe(d.Seconds())
	if reason != "" {
		m.UpstreamErrors.WithLabelValues(exchange, reason).Inc()
	}
}
