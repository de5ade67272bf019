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

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	pe "github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/paper"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
	"github.com/shopspring/decimal"
)

const btc = "BTC-USD-PERP"

// streamed serves a paper venue over HTTP, counting mark price reads, and
// a connector replica on it whose stream is the venue's websocket or (in
// process) its engine.
func streamed(t *testing.T, inProcess bool) (*connectortest.Replica, *pe.Engine, *atomic.Int64, *sockets) {
	t.Helper()
	e := pe.New(pe.Config{Seed: 1})
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
	a := paper.NewAdapter(venue.NewClient(srv.URL, srv.Client()))
	if inProcess {
		a.StreamFromEngine(e)
	}
	r := connectortest.Serve(t, a, connectortest.Options{URL: testenv.EmbeddedNATS(t).ClientURL(),
		Subjects: contract.NewSubjects(testenv.Prefix(t)), Env: contract.Mainnet})
	return r, e, &markReads, socks
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
			r, e, markReads, _ := streamed(t, inProcess)
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
