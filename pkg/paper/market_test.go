package paper_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

func TestDefaults(t *testing.T) {
	e, _ := newEngine(t, 0)
	ms := e.Markets()
	if len(ms) != 3 || ms[0].Symbol != btc || ms[1].Symbol != "ETH-USD-PERP" || ms[2].Symbol != "SOL-USD-PERP" {
		t.Fatalf("markets = %+v", ms)
	}
	eq(t, "BTC mark", ms[0].MarkPrice, d("60000"))
	eq(t, "ETH tick", ms[1].TickSize, d("0.01"))
	eq(t, "SOL lot", ms[2].LotSize, d("0.1"))
	eq(t, "min notional", ms[0].MinNotional, d("10"))
	if ms[0].MaxLeverage != 50 || ms[0].OpenInterest.Sign() <= 0 {
		t.Fatalf("BTC = %+v", ms[0])
	}
	f := e.Fees()
	eq(t, "maker", f.MakerBps, d("2"))
	eq(t, "taker", f.TakerBps, d("5"))
	b := mustBalance(t, e, "new")
	eq(t, "starting balance", b.Wallet, d("10000"))
	eq(t, "free", b.FreeCollateral, d("10000"))
	if l, _ := e.Leverage("new", btc); l != 10 {
		t.Fatalf("default leverage = %d", l)
	}
	b, _ = e.EnsureAccount("rich", d("250000"))
	eq(t, "ensured balance", b.Wallet, d("250000"))
	b, _ = e.EnsureAccount("rich", d("5"))
	eq(t, "ensure keeps existing", b.Wallet, d("250000"))
}

func TestWalkAdvancesWithClock(t *testing.T) {
	e, c := newEngine(t, 0)
	p0, _ := e.MarkPrice(btc)
	p1, _ := e.MarkPrice(btc)
	eq(t, "mark without time passing", p1.Mark, p0.Mark)
	c.Advance(30 * time.Second)
	p2, _ := e.MarkPrice(btc)
	if p2.Mark.Equal(p0.Mark) {
		t.Fatalf("mark did not move in 30s: %s", p2.Mark)
	}
	if !p2.Mark.Mod(d("0.1")).IsZero() || !p2.Index.Mod(d("0.1")).IsZero() {
		t.Fatalf("mark %s / index %s off the tick", p2.Mark, p2.Index)
	}
	if p2.Mark.Sub(p2.Index).Abs().GreaterThan(d("0.2")) {
		t.Fatalf("index %s too far from mark %s", p2.Index, p2.Mark)
	}
	if !p2.Time.Equal(start.Add(30 * time.Second)) {
		t.Fatalf("time = %v", p2.Time)
	}
}

func TestDeterministic(t *testing.T) {
	snapshot := func(seed int64) string {
		c := testenv.NewClock(start)
		e := paper.New(paper.Config{Seed: seed, Now: c.Now})
		e.PlaceOrder("a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Limit, Size: d("0.1"), Price: d("59950")})
		e.PlaceOrder("a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.StopMarket, Size: d("0.1"), TriggerPrice: d("60050")})
		c.Advance(2 * time.Hour)
		ms := e.Markets()
		book, _ := e.Orderbook("ETH-USD-PERP", 3)
		candles, _ := e.Candles("SOL-USD-PERP", 5, 50)
		orders, _ := e.OpenOrders("a", "")
		fills, _ := e.Fills("a", "", 0)
		b, _ := e.Balance("a")
		return fmt.Sprint(ms, book, candles, orders, fills, b)
	}
	a, b := snapshot(7), snapshot(7)
	if a != b {
		t.Fatal("same seed and clock gave different state")
	}
	if a == snapshot(8) {
		t.Fatal("different seeds gave the same state")
	}
}

func TestOrderbook(t *testing.T) {
	e, _ := newEngine(t, 0)
	mustMark(t, e, btc, "60000")
	b, err := e.Orderbook("btc-usd-perp", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Bids) != 20 || len(b.Asks) != 20 || b.Market != btc {
		t.Fatalf("book has %d/%d levels for %s, want 20/20", len(b.Bids), len(b.Asks), b.Market)
	}
	eq(t, "best bid", b.Bids[0].Price, d("59999.9"))
	eq(t, "best ask", b.Asks[0].Price, d("60000.1"))
	for i := 1; i < 20; i++ {
		if !b.Bids[i].Price.LessThan(b.Bids[i-1].Price) || !b.Asks[i].Price.GreaterThan(b.Asks[i-1].Price) {
			t.Fatalf("level %d out of order", i)
		}
	}
	for _, l := range append(b.Bids, b.Asks...) {
		if l.Size.Sign() <= 0 || !l.Size.Mod(d("0.001")).IsZero() {
			t.Fatalf("level size %s not a positive lot multiple", l.Size)
		}
	}
}

func TestCandles(t *testing.T) {
	for _, interval := range []int{1, 5, 15, 60, 240, 1440} {
		t.Run(fmt.Sprint(interval), func(t *testing.T) {
			e, c := newEngine(t, 90*time.Minute+17*time.Second)
			engineStart := c.Now().Unix()
			c.Advance(3 * time.Hour)
			cs, err := e.Candles(btc, interval, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 100 {
				t.Fatalf("got %d candles, want 100", len(cs))
			}
			ivs := int64(interval * 60)
			for i, k := range cs {
				if k.Time.Unix()%ivs != 0 {
					t.Fatalf("candle %d time %v not aligned", i, k.Time)
				}
				if i > 0 && k.Time.Unix()-cs[i-1].Time.Unix() != ivs {
					t.Fatalf("candle %d not one interval after the previous", i)
				}
				if k.Low.GreaterThan(decimal.Min(k.Open, k.Close)) || k.High.LessThan(decimal.Max(k.Open, k.Close)) || k.Low.Sign() <= 0 {
					t.Fatalf("candle %d inconsistent: %+v", i, k)
				}
				if k.Volume.Sign() <= 0 {
					t.Fatalf("candle %d volume %s", i, k.Volume)
				}
				// Up to the engine's start, bars chain: each opens at the
				// previous close.
				if i > 0 && k.Time.Unix() <= engineStart && !k.Open.Equal(cs[i-1].Close) {
					t.Fatalf("candle %d opens at %s, previous closed at %s", i, k.Open, cs[i-1].Close)
				}
			}
			last := cs[len(cs)-1]
			p, _ := e.MarkPrice(btc)
			eq(t, "last close", last.Close, p.Mark)
			if now := c.Now().Unix(); last.Time.Unix() > now || now-last.Time.Unix() >= ivs {
				t.Fatalf("last candle %v does not contain now", last.Time)
			}
			again, _ := e.Candles(btc, interval, 100)
			if fmt.Sprint(again) != fmt.Sprint(cs) {
				t.Fatal("candles changed without time passing")
			}
		})
	}
}

func TestFunding(t *testing.T) {
	e, c := newEngine(t, -5*time.Second) // 5s before a funding time
	f, _ := e.Funding(btc)
	if !f.NextTime.Equal(start) || f.Interval != 8*time.Hour {
		t.Fatalf("funding = %+v, want next at %v", f, start)
	}
	mustPlace(t, e, "long", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Market, Size: d("0.1")})
	mustPlace(t, e, "short", paper.OrderRequest{Market: btc, Side: paper.Sell, Type: paper.Market, Size: d("0.1")})
	before := mustBalance(t, e, "long").Wallet
	c.Advance(5 * time.Second)
	// The step at the funding time is the last one: mark and rate now are
	// the ones funding used.
	f, _ = e.Funding(btc)
	p, _ := e.MarkPrice(btc)
	pay := d("0.1").Mul(p.Mark).Mul(f.Rate)
	if f.Rate.Sign() <= 0 {
		t.Fatalf("rate %s, want positive (base 0.01%%)", f.Rate)
	}
	if !f.NextTime.Equal(start.Add(8 * time.Hour)) {
		t.Fatalf("next funding %v", f.NextTime)
	}
	lb, sb := mustBalance(t, e, "long"), mustBalance(t, e, "short")
	eq(t, "long paid", lb.FundingPaid, pay)
	eq(t, "long wallet", lb.Wallet, before.Sub(pay))
	eq(t, "short received", sb.FundingPaid, pay.Neg())
	c.Advance(time.Hour)
	eq(t, "no second payment", mustBalance(t, e, "long").FundingPaid, pay)
}

func TestConcurrent(t *testing.T) {
	e, c := newEngine(t, 0)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			acct := fmt.Sprintf("acct-%d", g)
			for i := 0; i < 50; i++ {
				side := paper.Buy
				if i%2 == 1 {
					side = paper.Sell
				}
				e.PlaceOrder(acct, paper.OrderRequest{Market: btc, Side: side, Type: paper.Market, Size: d("0.01")})
				o, err := e.PlaceOrder(acct, paper.OrderRequest{Market: "ETH-USD-PERP", Side: side, Type: paper.Limit, Size: d("0.1"), Price: d("3000")})
				if err == nil && i%3 == 0 {
					e.CancelOrder(acct, o.ID)
				}
				e.Positions(acct, "")
				e.Candles(btc, 1, 10)
			}
		}(g)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			c.Advance(time.Second)
			e.SetMarkPrice("ETH-USD-PERP", d("3000").Add(decimal.NewFromInt(int64(i%7-3))))
		}
	}()
	wg.Wait()
	for g := 0; g < 8; g++ {
		acct := fmt.Sprintf("acct-%d", g)
		fills, _ := e.Fills(acct, "", 100000)
		want := d("10000")
		for _, f := range fills {
			want = want.Add(f.RealizedPnL).Sub(f.Fee)
		}
		eq(t, acct+" wallet", mustBalance(t, e, acct).Wallet, want.Sub(mustBalance(t, e, acct).FundingPaid))
	}
}
