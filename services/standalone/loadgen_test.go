package standalone

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoadCountsFailuresByAnswer: a load run names what its failed
// requests were answered (status and code, or the connection's error), so
// a soak's failed pairs can be explained.
func TestLoadCountsFailuresByAnswer(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 3 {
		case 0:
			w.Write([]byte(`{"success":true}`))
		case 1:
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte(`{"success":false,"code":"EXCHANGE_ERROR","error":"refused"}`))
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`not json`))
		}
	}))
	defer srv.Close()
	res, err := Load(context.Background(), LoadOptions{URL: srv.URL + "/v1", Key: "made-up", Body: `{}`,
		Concurrency: 1, Duration: 10 * time.Second, Count: 9})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 9 || res.Failures != 6 || res.FailedBy["502 EXCHANGE_ERROR"] != 3 || res.FailedBy["503"] != 3 {
		t.Fatalf("%d requests, %d failures by %v; want 9, 6: 3 × 502 EXCHANGE_ERROR and 3 × 503", res.Requests, res.Failures, res.FailedBy)
	}
	if got := countsText(res.FailedBy); got != "3 × 502 EXCHANGE_ERROR, 3 × 503" {
		t.Fatalf("countsText = %q", got)
	}
}
