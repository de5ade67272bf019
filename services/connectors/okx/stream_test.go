package okx

import (
	"context"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/okx/sim"
)

func quiet(f *fixture, path string, read func()) bool {
	before := f.sim.Hits("GET", path)
	read()
	return f.sim.Hits("GET", path) == before
}

// TestOKXStreamReads: mark and index (two channels), funding and books5
// come from the stream after the first read, with books in base units; a
// mark OKX pushes only every 10 s while unchanged stays fresh because
// books5 keeps the socket busy.
func TestOKXStreamReads(t *testing.T) {
	// OKX's clock stands still: the mark does not walk, so mark-price is
	// pushed only when set (or every 10 s of that clock: never).
	frozen := time.Now()
	f := newFixture(t, sim.Config{Now: func() time.Time { return frozen }}, nil)
	r := connectortest.Serve(t, f.a, connectortest.Options{URL: testenv.EmbeddedNATS(t).ClientURL(),
		Subjects: contract.NewSubjects(testenv.Prefix(t)), Env: contract.Mainnet, Secret: f.cred.Secret})
	const market = "BTC-USDT-PERP"
	r.MarkPrice(t, market)
	connectortest.Eventually(t, 5*time.Second, "mark reads stop reaching REST", func() bool {
		return quiet(f, "/api/v5/public/mark-price", func() {
			if res := r.MarkPrice(t, market); res.IndexPrice.IsZero() || res.MarkPrice.IsZero() {
				t.Fatalf("mark without index: %+v", res)
			}
		})
	})
	want := d("93456.7")
	if _, err := f.sim.Engine().SetMarkPrice("BTC-USDT-SWAP", want); err != nil {
		t.Fatal(err)
	}
	connectortest.Eventually(t, 3*time.Second, "the new mark streams in", func() bool { return r.MarkPrice(t, market).MarkPrice.Equal(want) })
	// Past the 2 s bound nothing new came on mark-price, yet the view stays
	// fresh: freshness is the socket's (books5 every 100 ms), not the value's.
	time.Sleep(2500 * time.Millisecond)
	if !quiet(f, "/api/v5/public/mark-price", func() { r.MarkPrice(t, market) }) {
		t.Fatal("an unchanged mark older than the 2 s bound went to REST while the socket was busy")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	book := func() contract.OrderbookResult {
		var b contract.OrderbookResult
		if err := r.Call(ctx, contract.OpGetOrderbook, contract.OrderbookParams{Market: market, Depth: 5}, &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	book()
	connectortest.Eventually(t, 5*time.Second, "book reads stop reaching REST", func() bool {
		return quiet(f, "/api/v5/market/books", func() { book() })
	})
	got := book()
	eb, err := f.sim.Engine().Orderbook("BTC-USDT-SWAP", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Bids) != 5 || !got.Bids[0][1].Equal(eb.Bids[0].Size) {
		t.Fatalf("streamed book %v, venue's best bid %v (sizes must be base units)", got.Bids, eb.Bids[0])
	}
	var fr contract.FundingRateResult
	if err := r.Call(ctx, contract.OpGetFundingRate, contract.MarketParams{Market: market}, &fr); err != nil {
		t.Fatal(err)
	}
	connectortest.Eventually(t, 5*time.Second, "funding reads stop reaching REST", func() bool {
		return quiet(f, "/api/v5/public/funding-rate", func() {
			if err := r.Call(ctx, contract.OpGetFundingRate, contract.MarketParams{Market: market}, &fr); err != nil {
				t.Fatal(err)
			}
		})
	})
	if fr.NextFundingTime == 0 || fr.AsOf == 0 {
		t.Fatalf("funding from the stream: %+v", fr)
	}
}
