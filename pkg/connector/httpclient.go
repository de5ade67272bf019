package connector

import (
	"net"
	"net/http"
	"time"

	"github.com/perpgate/perpgate/pkg/telemetry"
)

// NewHTTPClient returns the upstream HTTP client connectors share: bounded
// timeouts, a client span per call carrying the trace upstream, and enough idle connections per host that a busy connector
// reuses connections instead of dialing one per request (the default of 2
// idle connections per host makes every burst pay a TCP handshake).
func NewHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: telemetry.HTTPTransport(&http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          1024,
			MaxIdleConnsPerHost:   256,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   5 * time.Second,
			ExpectContinueTimeout: time.Second,
		}),
	}
}
