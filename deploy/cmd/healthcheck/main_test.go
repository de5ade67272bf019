package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"code":"NOT_READY"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	tests := []struct {
		name    string
		target  string
		wantErr string // empty: healthy
	}{
		{name: "2xx is healthy", target: srv.URL + "/healthz"},
		{name: "503 is not", target: srv.URL + "/readyz", wantErr: "503 Service Unavailable"},
		{name: "nothing listening", target: "http://" + closedAddr + "/healthz", wantErr: "connection refused"},
		{name: "tcp port open", target: "tcp://" + ln.Addr().String()},
		{name: "tcp port closed", target: "tcp://" + closedAddr, wantErr: "connection refused"},
		{name: "no scheme", target: "127.0.0.1:8082", wantErr: "not a URL"},
		{name: "unknown scheme", target: "udp://127.0.0.1:8082", wantErr: "scheme must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			err := probe(ctx, tt.target)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("want healthy, got %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("want an error containing %q, got %v", tt.wantErr, err)
			}
		})
	}
}
