package telemetry

import (
	"context"
	"net/http"
	"strings"
	"unicode"
)

type venueKey struct{}

type venueCount struct {
	m        *Metrics
	exchange string
}

// WithVenueRequests makes every upstream HTTP call made with ctx (through
// HTTPTransport) count in perpgate_venue_requests_total for exchange.
func WithVenueRequests(ctx context.Context, m *Metrics, exchange string) context.Context {
	if m == nil {
		return ctx
	}
	return context.WithValue(ctx, venueKey{}, venueCount{m: m, exchange: exchange})
}

func countVenueRequest(req *http.Request) {
	if vc, ok := req.Context().Value(venueKey{}).(venueCount); ok {
		vc.m.VenueRequests.WithLabelValues(vc.exchange, Endpoint(req.Method, req.URL.Path)).Inc()
	}
}

// Endpoint names a request for a metric label: method and path, with path
// segments holding digits (ids, accounts; API versions like v5 excepted)
// as {id}, so the label set stays bounded.
func Endpoint(method, path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if isVersion(s) || !strings.ContainsFunc(s, unicode.IsDigit) {
			continue
		}
		segs[i] = "{id}"
	}
	return method + " " + strings.Join(segs, "/")
}

func isVersion(s string) bool {
	return len(s) > 1 && s[0] == 'v' && strings.IndexFunc(s[1:], func(r rune) bool { return !unicode.IsDigit(r) }) < 0
}
