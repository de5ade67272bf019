package paper_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	pe "github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/telemetry"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/paper"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/shopspring/decimal"
)

const btc = "BTC-USD-PERP"

// streamed serves a paper venue over HTTP, counting mark price reads, and
// a connector replica on it whose stream is the venue's websocket or (in
// process) its engine.
func streamed(t *testing.T, inProcess bool) (*connectortest.Replica, *pe.Engine, *atomic.Int64, *sockets) {
	r, e, reads, socks, _ := streamedWithMetrics(t, inProcess)
	return r, e, reads, socks
}

func streamedWithMetrics(t *testing.T, inProcess bool) (*connectortest.Replica, *pe.Engine, *atomic.Int64, *sockets, *telemetry.Metrics) {
	t.Helper()
	// The venue's clock stands still, so the price walk does not move a
	// mark a test set before the stream shows it.
	frozen := time.Now()
	e := pe.New(pe.Config{Seed: 1, Now: func() time.Time { return frozen }})
	var markReads atomic.Int64
	h := venue.NewHandler(e)
	socks := &sockets{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/mark") && r.Method == http.MethodGet {
			markReads.Add(1)
		}
		if r.URL.Path == "/v1/stream" {
			r = r.WithContext(socks.open(r.Context()))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	// The connectors' own HTTP client: it counts venue requests.
	a := paper.NewAdapter(venue.NewClient(srv.URL, connector.NewHTTPClient(5*time.Second)))
	if inProcess {
		a.StreamFromEngine(e)
	}
	metrics := telemetry.NewMetrics()
	r := connectortest.Serve(t, a, connectortest.Options{URL: testenv.EmbeddedNATS(t).ClientURL(),
		Subjects: contract.NewSubjects(testenv.Prefix(t)), Env: contract.Mainnet, Metrics: metrics})
	return r, e, &markReads, socks, metrics
}

// sockets counts the venue's stream sockets and can drop them all (a
// hijacked connection is out of httptest's reach).
type sockets struct {
	mu      sync.Mutex
	opened  int
	cancels []context.CancelFunc
}

func (s *sockets) open(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opened++
	s.cancels = append(s.cancels, cancel)
	return ctx
}

func (s *sockets) dropAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.cancels {
		c()
	}
	s.cancels = nil
}

func (s *sockets) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened
}

// TestPaperStreamServesMarkPrice: after the first read, getMarkPrice comes
// from the stream (no more REST reads), follows a mark the venue sets, and
// says when it was current.
func TestPaperStreamServesMarkPrice(t *testing.T) {
	for _, inProcess := range []bool{false, true} {
		name := map[bool]string{false: "websocket", true: "in process"}[inProcess]
		t.Run(name, func(t *testing.T) {
			r, e, markReads, _, metrics := streamedWithMetrics(t, inProcess)
			if res := r.MarkPrice(t, btc); markReads.Load() != 1 || res.AsOf == 0 {
				t.Fatalf("first read: %d REST reads, asOf %d; want 1 and the receipt time", markReads.Load(), res.AsOf)
			}
			connectortest.Eventually(t, 5*time.Second, "reads stop reaching REST", func() bool {
				before := markReads.Load()
				r.MarkPrice(t, btc)
				return markReads.Load() == before
			})
			before := markReads.Load()
			want := decimal.RequireFromString("61234.5")
			if _, err := e.SetMarkPrice(btc, want); err != nil {
				t.Fatal(err)
			}
			connectortest.Eventually(t, 2*time.Second, "the set mark arrives", func() bool { return r.MarkPrice(t, btc).MarkPrice.Equal(want) })
			for range 100 {
				res := r.MarkPrice(t, btc)
				if age := time.Now().UnixMilli() - res.AsOf; age < 0 || age > 2000 {
					t.Fatalf("asOf %d is %d ms old", res.AsOf, age)
				}
			}
			if got := markReads.Load(); got != before {
				t.Fatalf("REST mark reads went from %d to %d while streaming", before, got)
			}
			// The metrics tell the same: venue calls and reads by source.
			venue := testutil.ToFloat64(metrics.VenueRequests.WithLabelValues("paper", "GET /v1/markets/"+btc+"/mark"))
			if int64(venue) != markReads.Load() {
				t.Errorf("perpgate_venue_requests_total for the mark = %v, the venue saw %d", venue, markReads.Load())
			}
			fromStream := testutil.ToFloat64(metrics.StreamReads.WithLabelValues("paper", contract.OpGetMarkPrice, "stream"))
			fromREST := testutil.ToFloat64(metrics.StreamReads.WithLabelValues("paper", contract.OpGetMarkPrice, "rest"))
			if fromStream < 100 || int64(fromREST) != markReads.Load() {
				t.Errorf("reads by source: stream %v, rest %v (venue saw %d)", fromStream, fromREST, markReads.Load())
			}
		})
	}
}

// TestPaperStreamReconnects: the venue drops every socket; the connector
// dials again and reads keep coming from the stream.
func TestPaperStreamReconnects(t *testing.T) {
	r, e, markReads, socks := streamed(t, false)
	r.MarkPrice(t, btc)
	connectortest.Eventually(t, 5*time.Second, "reads stop reaching REST", func() bool {
		before := markReads.Load()
		r.MarkPrice(t, btc)
		return markReads.Load() == before
	})
	if n := socks.count(); n != 1 {
		t.Fatalf("%d sockets before the drop, want 1", n)
	}
	socks.dropAll()
	want := decimal.RequireFromString("59000")
	if _, err := e.SetMarkPrice(btc, want); err != nil {
		t.Fatal(err)
	}
	connectortest.Eventually(t, 5*time.Second, "the stream is back with the new mark", func() bool {
		before := markReads.Load()
		return r.MarkPrice(t, btc).MarkPrice.Equal(want) && markReads.Load() == before
	})
	if n := socks.count(); n != 2 {
		t.Fatalf("%d sockets, want 2 (one redial)", n)
	}
}
