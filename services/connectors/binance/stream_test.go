package binance

import (
	"context"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
	"github.com/shopspring/decimal"
)

// streamFixture serves the adapter through the runtime on NATS, with the
// simulator's websocket as its stream.
func streamFixture(t *testing.T) (*fixture, *connectortest.Replica) {
	t.Helper()
	// The venue's clock stands still, so its price walk cannot move a mark
	// a test set before the stream delivers it.
	still := time.Now()
	f := newFixture(t, sim.Config{Now: func() time.Time { return still }}, nil)
	f.a.cfg.MainnetStreamURL = venuekit.WSURL(f.url)
	r := connectortest.Serve(t, f.a, connectortest.Options{URL: testenv.EmbeddedNATS(t).ClientURL(),
		Subjects: contract.NewSubjects(testenv.Prefix(t)), Env: contract.Mainnet, Secret: f.cred.Secret})
	return f, r
}

// quiet reports whether read made no request to path.
func quiet(f *fixture, path string, read func()) bool {
	before := f.sim.Hits("GET", path)
	read()
	return f.sim.Hits("GET", path) == before
}

// TestBinanceStreamMarkPrice: the first getMarkPrice asks REST and
// subscribes <symbol>@markPrice@1s; then reads come from the stream,
// follow the simulator's mark and carry a recent asOf.
func TestBinanceStreamMarkPrice(t *testing.T) {
	f, r := streamFixture(t)
	first := r.MarkPrice(t, "BTC-USDT-PERP")
	if h := f.sim.Hits("GET", "/fapi/v1/premiumIndex"); h != 1 || first.AsOf == 0 {
		t.Fatalf("first read: %d premiumIndex calls, asOf %d", h, first.AsOf)
	}
	connectortest.Eventually(t, 5*time.Second, "reads stop reaching REST", func() bool {
		return quiet(f, "/fapi/v1/premiumIndex", func() { r.MarkPrice(t, "BTC-USDT-PERP") })
	})
	before := f.sim.Hits("GET", "/fapi/v1/premiumIndex")
	want := decimal.RequireFromString("91234.5")
	if _, err := f.sim.Engine().SetMarkPrice("BTCUSDT", want); err != nil {
		t.Fatal(err)
	}
	connectortest.Eventually(t, 3*time.Second, "the new mark streams in", func() bool {
		return r.MarkPrice(t, "BTC-USDT-PERP").MarkPrice.Equal(want)
	})
	for range 50 {
		res := r.MarkPrice(t, "BTC-USDT-PERP")
		if age := time.Now().UnixMilli() - res.AsOf; age < 0 || age > 2000 {
			t.Fatalf("asOf %d is %d ms old", res.AsOf, age)
		}
	}
	if h := f.sim.Hits("GET", "/fapi/v1/premiumIndex"); h != before {
		t.Fatalf("premiumIndex calls went from %d to %d while streaming", before, h)
	}
	if d := f.sim.StreamDials(); d != 2 {
		t.Fatalf("%d sockets, want 2 (/market and /public)", d)
	}
}

func (r *bookReader) read(t *testing.T) contract.OrderbookResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var res contract.OrderbookResult
	if err := r.Call(ctx, contract.OpGetOrderbook, contract.OrderbookParams{Market: "BTC-USDT-PERP", Depth: 10}, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

type bookReader struct{ *connectortest.Replica }

// sameBook compares a streamed book with the simulator's at that moment.
func sameBook(f *fixture, got contract.OrderbookResult) bool {
	b, err := f.sim.Engine().Orderbook("BTCUSDT", 10)
	if err != nil || len(b.Bids) != len(got.Bids) || len(b.Asks) != len(got.Asks) {
		return false
	}
	for i := range b.Bids {
		if !b.Bids[i].Price.Equal(got.Bids[i][0]) || !b.Bids[i].Size.Equal(got.Bids[i][1]) {
			return false
		}
	}
	for i := range b.Asks {
		if !b.Asks[i].Price.Equal(got.Asks[i][0]) || !b.Asks[i].Size.Equal(got.Asks[i][1]) {
			return false
		}
	}
	return true
}

// TestBinanceStreamBookGapResyncs: the diff book is built from a
// /fapi/v1/depth snapshot; a missing update (pu not the last u) makes the
// holder take a new snapshot, and the book matches the venue again.
func TestBinanceStreamBookGapResyncs(t *testing.T) {
	f, rep := streamFixture(t)
	r := &bookReader{rep}
	r.read(t)
	connectortest.Eventually(t, 5*time.Second, "book reads stop reaching REST", func() bool {
		return quiet(f, "/fapi/v1/depth", func() { r.read(t) })
	})
	connectortest.Eventually(t, 3*time.Second, "the streamed book is the venue's", func() bool { return sameBook(f, r.read(t)) })
	snapshots := f.sim.Hits("GET", "/fapi/v1/depth")
	f.sim.SkipDepthUpdates("BTCUSDT", 1)
	connectortest.Eventually(t, 3*time.Second, "a snapshot after the gap", func() bool {
		return f.sim.Hits("GET", "/fapi/v1/depth") > snapshots
	})
	connectortest.Eventually(t, 3*time.Second, "the resynced book is the venue's, from the stream", func() bool {
		got := r.read(t)
		return sameBook(f, got) && quiet(f, "/fapi/v1/depth", func() { r.read(t) })
	})
}

// TestBinanceStreamReconnects: the simulator drops both sockets; the
// holder dials again and reads return to the stream.
func TestBinanceStreamReconnects(t *testing.T) {
	f, r := streamFixture(t)
	r.MarkPrice(t, "BTC-USDT-PERP")
	connectortest.Eventually(t, 5*time.Second, "reads stop reaching REST", func() bool {
		return quiet(f, "/fapi/v1/premiumIndex", func() { r.MarkPrice(t, "BTC-USDT-PERP") })
	})
	f.sim.DropStreams()
	connectortest.Eventually(t, 5*time.Second, "both sockets dialled again", func() bool { return f.sim.StreamDials() == 4 })
	want := decimal.RequireFromString("88888.8")
	if _, err := f.sim.Engine().SetMarkPrice("BTCUSDT", want); err != nil {
		t.Fatal(err)
	}
	connectortest.Eventually(t, 5*time.Second, "reads come from the new sockets", func() bool {
		return quiet(f, "/fapi/v1/premiumIndex", func() {}) && r.MarkPrice(t, "BTC-USDT-PERP").MarkPrice.Equal(want) &&
			quiet(f, "/fapi/v1/premiumIndex", func() { r.MarkPrice(t, "BTC-USDT-PERP") })
	})
}

// TestBinanceMarketListStaysOnREST: Binance streams no open interest, so
// getMarketsWithFunding is a REST call that subscribes nothing (every
// market at once would pass Binance's 200 streams per connection).
func TestBinanceMarketListStaysOnREST(t *testing.T) {
	f, r := streamFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var res contract.MarketsResult
	for range 3 {
		if err := r.Call(ctx, contract.OpGetMarketsWithFunding, struct{}{}, &res); err != nil {
			t.Fatal(err)
		}
	}
	if res.AsOf == 0 || len(res.Markets) == 0 {
		t.Fatalf("markets %+v", res)
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		if d := f.sim.StreamDials(); d != 0 {
			t.Fatalf("getMarketsWithFunding opened %d sockets", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
