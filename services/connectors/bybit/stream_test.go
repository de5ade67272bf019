package bybit

import (
	"context"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/bybit/sim"
	"github.com/shopspring/decimal"
)

// streamFixture serves the adapter through the runtime on NATS, with the
// simulator's /v5/public/linear as its stream, for a credential of env.
func streamFixture(t *testing.T, env contract.Environment, demo bool) (*fixture, *connectortest.Replica) {
	t.Helper()
	// The venue's clock stands still, so its price walk cannot move a mark
	// a test set before the stream delivers it.
	still := time.Now()
	f := newFixture(t, sim.Config{Now: func() time.Time { return still }}, nil)
	c := credential(env, testKey, testSecret, demo)
	r := connectortest.Serve(t, f.a, connectortest.Options{URL: testenv.EmbeddedNATS(t).ClientURL(),
		Subjects: contract.NewSubjects(testenv.Prefix(t)), Env: env, Secret: c.Secret})
	return f, r
}

func quiet(f *fixture, path string, read func()) bool {
	before := f.sim.Hits("GET", path)
	read()
	return f.sim.Hits("GET", path) == before
}

// TestBybitStreamTickerDeltas: tickers.{symbol} sends a snapshot, then only
// changed fields; getMarkPrice and getFundingRate come from the merged
// view after the first read and follow a set mark.
func TestBybitStreamTickerDeltas(t *testing.T) {
	f, r := streamFixture(t, contract.Mainnet, false)
	r.MarkPrice(t, "BTC-USDT-PERP")
	connectortest.Eventually(t, 5*time.Second, "mark reads stop reaching REST", func() bool {
		return quiet(f, "/v5/market/tickers", func() { r.MarkPrice(t, "BTC-USDT-PERP") })
	})
	want := decimal.RequireFromString("90123.4")
	if _, err := f.sim.Engine().SetMarkPrice("BTCUSDT", want); err != nil {
		t.Fatal(err)
	}
	connectortest.Eventually(t, 3*time.Second, "the delta's mark arrives", func() bool {
		return r.MarkPrice(t, "BTC-USDT-PERP").MarkPrice.Equal(want)
	})
	// A delta without funding fields leaves the funding from the snapshot.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var fr contract.FundingRateResult
	if err := r.Call(ctx, contract.OpGetFundingRate, contract.MarketParams{Market: "BTC-USDT-PERP"}, &fr); err != nil {
		t.Fatal(err)
	}
	connectortest.Eventually(t, 3*time.Second, "funding from the stream", func() bool {
		return quiet(f, "/v5/market/tickers", func() {
			if err := r.Call(ctx, contract.OpGetFundingRate, contract.MarketParams{Market: "BTC-USDT-PERP"}, &fr); err != nil {
				t.Fatal(err)
			}
		})
	})
	if fr.NextFundingTime == 0 || fr.AsOf == 0 {
		t.Fatalf("funding from the stream lost its fields: %+v", fr)
	}
}

// TestBybitStreamBookGapResyncs: orderbook.50 deltas number u one by one;
// a skipped one makes the holder read /v5/market/orderbook and continue.
func TestBybitStreamBookGapResyncs(t *testing.T) {
	f, r := streamFixture(t, contract.Mainnet, false)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	read := func() contract.OrderbookResult {
		var b contract.OrderbookResult
		if err := r.Call(ctx, contract.OpGetOrderbook, contract.OrderbookParams{Market: "BTC-USDT-PERP", Depth: 10}, &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	read()
	connectortest.Eventually(t, 5*time.Second, "book reads stop reaching REST", func() bool {
		return quiet(f, "/v5/market/orderbook", func() { read() })
	})
	before := f.sim.Hits("GET", "/v5/market/orderbook")
	f.sim.SkipBookUpdates("BTCUSDT", 1)
	connectortest.Eventually(t, 3*time.Second, "a REST snapshot after the gap", func() bool {
		return f.sim.Hits("GET", "/v5/market/orderbook") > before
	})
	connectortest.Eventually(t, 3*time.Second, "the book is the venue's again, from the stream", func() bool {
		got := read()
		b, err := f.sim.Engine().Orderbook("BTCUSDT", 10)
		if err != nil || len(got.Bids) != 10 || !got.Bids[0][0].Equal(b.Bids[0].Price) || !got.Asks[9][0].Equal(b.Asks[9].Price) {
			return false
		}
		return quiet(f, "/v5/market/orderbook", func() { read() })
	})
}

// TestBybitStreamDemoUsesREST: a demo account's prices are not on any
// public stream, so its reads keep going to REST and open no socket.
func TestBybitStreamDemoUsesREST(t *testing.T) {
	f, r := streamFixture(t, contract.Testnet, true)
	for range 5 {
		r.MarkPrice(t, "BTC-USDT-PERP")
		time.Sleep(100 * time.Millisecond)
	}
	if h := f.sim.Hits("GET", "/v5/market/tickers"); h != 5 {
		t.Fatalf("%d ticker calls for 5 reads, want 5", h)
	}
	if d := f.sim.StreamDials(); d != 0 {
		t.Fatalf("%d sockets for a demo credential", d)
	}
}
