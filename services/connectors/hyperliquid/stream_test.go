package hyperliquid_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid/sim"
	"github.com/shopspring/decimal"
)

// streamVenue is the simulator over HTTP, counting POST /info.
type streamVenue struct {
	sim   *sim.Sim
	url   string
	infos atomic.Int64
}

func newStreamVenue(t *testing.T) *streamVenue {
	t.Helper()
	// The venue's clock stands still, so its price walk cannot move a mark
	// a test set before the stream delivers it.
	still := time.Now()
	v := &streamVenue{sim: sim.New(sim.Config{Now: func() time.Time { return still }})}
	h := v.sim.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/info" {
			v.infos.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	v.url = srv.URL
	return v
}

// replica serves a fresh adapter on v through the runtime.
func (v *streamVenue) replica(t *testing.T, url string, subjects contract.Subjects, sc connector.StreamConfig) *connectortest.Replica {
	t.Helper()
	cfg := hyperliquid.DefaultConfig()
	cfg.URL = v.url
	a := hyperliquid.NewAdapter(cfg, http.DefaultClient)
	return connectortest.Serve(t, a, connectortest.Options{URL: url, Subjects: subjects, Env: contract.Testnet,
		Secret: contract.Secret(`{"accountAddress":"0x0000000000000000000000000000000000000001","agentPrivateKey":"0x01"}`), Stream: sc})
}

// quiet reports whether read sent no POST /info.
func (v *streamVenue) quiet(read func()) bool {
	before := v.infos.Load()
	read()
	return v.infos.Load() == before
}

func call[T any](t *testing.T, r *connectortest.Replica, op string, params any) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out T
	if err := r.Call(ctx, op, params, &out); err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return out
}

// TestHyperliquidStreamReads: getMarkPrice, getOrderbook and
// getMarketsWithFunding come from activeAssetCtx and l2Book after their
// first read; a book deeper than l2Book's 20 levels still goes to REST.
func TestHyperliquidStreamReads(t *testing.T) {
	v := newStreamVenue(t)
	r := v.replica(t, testenv.EmbeddedNATS(t).ClientURL(), contract.NewSubjects(testenv.Prefix(t)), connector.StreamConfig{})
	r.MarkPrice(t, "BTC")
	connectortest.Eventually(t, 5*time.Second, "mark reads stop reaching REST", func() bool {
		return v.quiet(func() { r.MarkPrice(t, "BTC") })
	})
	want := decimal.RequireFromString("61234")
	if _, err := v.sim.Engine().SetMarkPrice("BTC", want); err != nil {
		t.Fatal(err)
	}
	connectortest.Eventually(t, 3*time.Second, "the new mark streams in", func() bool { return r.MarkPrice(t, "BTC").MarkPrice.Equal(want) })
	if res := r.MarkPrice(t, "BTC"); time.Now().UnixMilli()-res.AsOf > 2000 || res.AsOf > time.Now().UnixMilli() {
		t.Fatalf("asOf %d is not within the last 2 s", res.AsOf)
	}

	book := func(depth int) contract.OrderbookResult {
		return call[contract.OrderbookResult](t, r, contract.OpGetOrderbook, contract.OrderbookParams{Market: "BTC", Depth: depth})
	}
	book(10)
	connectortest.Eventually(t, 5*time.Second, "book reads stop reaching REST", func() bool {
		return v.quiet(func() {
			if b := book(10); len(b.Bids) != 10 || len(b.Asks) != 10 {
				t.Fatalf("book of %d/%d levels, want 10", len(b.Bids), len(b.Asks))
			}
		})
	})
	if v.quiet(func() { book(50) }) {
		t.Fatal("a 50-level book came from l2Book's 20 levels")
	}

	markets := func() contract.MarketsResult {
		return call[contract.MarketsResult](t, r, contract.OpGetMarketsWithFunding, struct{}{})
	}
	markets()
	connectortest.Eventually(t, 5*time.Second, "market list stops reaching REST", func() bool {
		return v.quiet(func() {
			if m := markets(); len(m.Markets) == 0 || m.AsOf == 0 {
				t.Fatalf("markets %+v", m)
			}
		})
	})
}

// TestHyperliquidStreamOneSocketAndHandover: two replicas on one NATS open
// one socket between them; when the holder's connection dies the other
// replica opens its own within seconds and reads stay off REST.
func TestHyperliquidStreamOneSocketAndHandover(t *testing.T) {
	v := newStreamVenue(t)
	url, subjects := testenv.EmbeddedNATS(t).ClientURL(), contract.NewSubjects(testenv.Prefix(t))
	sc := connector.StreamConfig{LeaseTTL: time.Second}
	a := v.replica(t, url, subjects, sc)
	b := v.replica(t, url, subjects, sc)
	// Requests go to either replica (queue group); both end up reading.
	for range 4 {
		a.MarkPrice(t, "ETH")
		b.MarkPrice(t, "ETH")
	}
	connectortest.Eventually(t, 5*time.Second, "reads stop reaching REST", func() bool {
		return v.quiet(func() { a.MarkPrice(t, "ETH"); b.MarkPrice(t, "ETH") })
	})
	if d := v.sim.StreamDials(); d != 1 {
		t.Fatalf("%d sockets for two replicas, want 1", d)
	}
	holder, other := a, b
	if b.Runtime.HoldsStreams() {
		holder, other = b, a
	}
	if !holder.Runtime.HoldsStreams() || other.Runtime.HoldsStreams() {
		t.Fatal("want exactly one replica holding the socket")
	}
	killed := time.Now()
	holder.NC.Close()
	connectortest.Eventually(t, 5*time.Second, "the other replica opens the socket", func() bool { return v.sim.StreamDials() == 2 })
	connectortest.Eventually(t, 5*time.Second, "reads from the stream after the holder's death", func() bool {
		return v.quiet(func() { other.MarkPrice(t, "ETH") })
	})
	took := time.Since(killed)
	t.Logf("stream served again %v after the holder died (lease TTL %v)", took.Round(time.Millisecond), sc.LeaseTTL)
	if !other.Runtime.HoldsStreams() {
		t.Fatal("the surviving replica does not hold the socket")
	}
}
