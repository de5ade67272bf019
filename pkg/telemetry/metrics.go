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
	// Market-data streams (issue 15).
	StreamReads      *prometheus.CounterVec // perpgate_stream_reads_total{exchange,operation,source}: source stream or rest
	StreamSocketUp   *prometheus.GaugeVec   // perpgate_stream_socket_up{exchange,env}: 1 while this replica's socket is open
	StreamReconnects *prometheus.CounterVec // perpgate_stream_reconnects_total{exchange,env}
	StreamMessages   *prometheus.CounterVec // perpgate_stream_messages_total{exchange,env}: frames read by the holder
	StreamLag        *prometheus.GaugeVec   // perpgate_stream_lag_seconds{exchange,env}: frame on the holder's socket to this replica's view
	VenueRequests    *prometheus.CounterVec // perpgate_venue_requests_total{exchange,endpoint}: every REST call to a venue
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
		StreamReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perpgate_stream_reads_total", Help: "Market-data reads by where they were answered from: the stream view or the venue's REST API.",
		}, []string{"exchange", "operation", "source"}),
		StreamSocketUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "perpgate_stream_socket_up", Help: "1 while this replica holds an open market-data socket to the venue.",
		}, []string{"exchange", "env"}),
		StreamReconnects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perpgate_stream_reconnects_total", Help: "Market-data sockets lost and dialled again.",
		}, []string{"exchange", "env"}),
		StreamMessages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perpgate_stream_messages_total", Help: "Frames read from the venue's market-data socket by the holder.",
		}, []string{"exchange", "env"}),
		StreamLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "perpgate_stream_lag_seconds", Help: "Delay from a frame on the holder's socket to this replica's view, last update.",
		}, []string{"exchange", "env"}),
		VenueRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perpgate_venue_requests_total", Help: "REST calls made to the venue, by exchange and endpoint (method and path, ids as {id}).",
		}, []string{"exchange", "endpoint"}),
	}
	reg.MustRegister(m.Requests, m.RequestDuration, m.RateLimited, m.UpstreamDuration, m.UpstreamErrors, m.VenueRequests,
		m.StreamReads, m.StreamSocketUp, m.StreamReconnects, m.StreamMessages, m.StreamLag,
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

// ObserveStreamRead records where a market-data read was answered from.
func (m *Metrics) ObserveStreamRead(exchange, operation string, cached bool) {
	if m == nil {
		return
	}
	source := "rest"
	if cached {
		source = "stream"
	}
	m.StreamReads.WithLabelValues(exchange, operation, source).Inc()
}

// StreamSocket records a market-data socket opening (up) or closing; a
// close after an open counts as a reconnect to come.
func (m *Metrics) StreamSocket(exchange, env string, up bool) {
	if m == nil {
		return
	}
	if up {
		m.StreamSocketUp.WithLabelValues(exchange, env).Set(1)
		return
	}
	m.StreamSocketUp.WithLabelValues(exchange, env).Set(0)
	m.StreamReconnects.WithLabelValues(exchange, env).Inc()
}

// StreamMessage counts one frame read by the holder.
func (m *Metrics) StreamMessage(exchange, env string) {
	if m == nil {
		return
	}
	m.StreamMessages.WithLabelValues(exchange, env).Inc()
}

// ObserveStreamLag records how late an update reached this replica's view.
func (m *Metrics) ObserveStreamLag(exchange, env string, d time.Duration) {
	if m == nil {
		return
	}
	m.StreamLag.WithLabelValues(exchange, env).Set(d.Seconds())
}
