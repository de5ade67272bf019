package venue

import (
	"net/http"
	"net/http/httptest"

	"github.com/perpgate/perpgate/pkg/telemetry"
)

// InProcessClient returns an HTTP client that serves every request with h
// directly, without a socket. The standalone gateway uses it for its
// built-in venue: the adapter still speaks the venue's HTTP API, only the
// loopback TCP hop (and its syscalls) is gone.
func InProcessClient(h http.Handler) *http.Client {
	return &http.Client{Transport: telemetry.HTTPTransport(handlerTransport{h})}
}

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}
