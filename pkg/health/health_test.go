package health

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	ok := func(context.Context) error { return nil }
	down := func(context.Context) error { return errors.New("connection refused") }
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "perpgate_up 1\n") })
	tests := []struct {
		name       string
		checks     map[string]Check
		path       string
		wantStatus int
		wantBody   string
	}{
		{"alive regardless of deps", map[string]Check{"redis": down}, "/healthz", 200, `"ok"`},
		{"ready when all answer", map[string]Check{"nats": ok, "redis": ok}, "/readyz", 200, `"ready"`},
		{"not ready names the failure", map[string]Check{"nats": ok, "redis": down}, "/readyz", 503, "redis: connection refused"},
		{"metrics", nil, "/metrics", 200, "perpgate_up 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handler(tt.checks, metrics).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != tt.wantStatus || !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Fatalf("got %d %s", rec.Code, rec.Body)
			}
		})
	}
}

// TestPublicHandler: clients learn ready or not, never which dependency or
// address failed.
func TestPublicHandler(t *testing.T) {
	down := func(context.Context) error { return errors.New("dial tcp 10.0.0.7:6379: connection refused") }
	h := PublicHandler(map[string]Check{"redis": down})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	body := rec.Body.String()
	if rec.Code != 503 || !strings.Contains(body, "not ready") || strings.Contains(body, "redis") || strings.Contains(body, "10.0.0.7") {
		t.Fatalf("got %d %s", rec.Code, body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != 404 {
		t.Fatalf("public handler serves /metrics: %d", rec.Code)
	}
}
