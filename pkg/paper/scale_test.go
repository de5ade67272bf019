package paper_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// wantOrderMargin is the documented rule computed from what the engine
// shows: every open limit order that is not reduce-only reserves the part
// of its remaining size the position would not absorb, at its price over
// the market's leverage.
func wantOrderMargin(t *testing.T, e *paper.Engine, acct string) decimal.Decimal {
	t.Helper()
	open, err := e.OpenOrders(acct, "")
	if err != nil {
		t.Fatal(err)
	}
	pos, err := e.Positions(acct, "")
	if err != nil {
		t.Fatal(err)
	}
	sum := decimal.Zero
	for _, o := range open {
		if o.Type != paper.Limit || o.ReduceOnly || o.Status != paper.Open {
			continue
		}
		left := o.Size.Sub(o.FilledSize)
		for _, p := range pos {
			if p.Market == o.Market && (o.Side == paper.Buy) == (p.Side == paper.Short) {
				left = left.Sub(decimal.Min(left, p.Size))
			}
		}
		lev, err := e.Leverage(acct, o.Market)
		if err != nil {
			t.Fatal(err)
		}
		sum = sum.Add(left.Mul(o.Price).DivRound(decimal.NewFromInt(int64(lev)), 8))
	}
	return sum
}

// TestOrderMarginKeptIncrementally runs random placements, cancels, fills,
// leverage changes and mark moves, and checks after each that the order
// margin the engine keeps equals the rule recomputed from scratch.
func TestOrderMarginKeptIncrementally(t *testing.T) {
	e, clock := newEngine(t, time.Hour)
	const acct = "acct"
	if _, err := e.EnsureAccount(acct, d("1000000")); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	markets := []string{btc, "ETH-USD-PERP"}
	for i := range 1500 {
		m := markets[rng.IntN(len(markets))]
		info, err := e.Market(m)
		if err != nil {
			t.Fatal(err)
		}
		side := paper.Buy
		if rng.IntN(2) == 0 {
			side = paper.Sell
		}
		// Prices within ±1 % of mark: some rest, some cross and fill.
		off := decimal.NewFromInt(int64(rng.IntN(201) - 100)).Div(decimal.NewFromInt(10000))
		price := info.MarkPrice.Add(info.MarkPrice.Mul(off)).Div(info.TickSize).Floor().Mul(info.TickSize)
		size := info.LotSize.Mul(decimal.NewFromInt(int64(1 + rng.IntN(50))))
		if m == "ETH-USD-PERP" {
			size = size.Mul(decimal.NewFromInt(10))
		}
		switch op := rng.IntN(21); {
		case op == 20:
			// Large and a few ticks through the book: part fills, the rest rests.
			ticks := info.TickSize.Mul(decimal.NewFromInt(int64(1 + rng.IntN(3))))
			if side == paper.Sell {
				ticks = ticks.Neg()
			}
			big := info.LotSize.Mul(decimal.NewFromInt(int64(3000 + rng.IntN(10000))))
			if m == "ETH-USD-PERP" {
				big = big.Mul(decimal.NewFromInt(10))
			}
			_, _ = e.PlaceOrder(acct, paper.OrderRequest{Market: m, Side: side, Type: paper.Limit, Size: big, Price: info.MarkPrice.Add(ticks)})
		case op < 10:
			_, _ = e.PlaceOrder(acct, paper.OrderRequest{Market: m, Side: side, Type: paper.Limit, Size: size, Price: price,
				ReduceOnly: rng.IntN(5) == 0, ClientOrderID: fmt.Sprintf("c%d", i)})
		case op < 12:
			_, _ = e.PlaceOrder(acct, paper.OrderRequest{Market: m, Side: side, Type: paper.Market, Size: size})
		case op < 15:
			open, _ := e.OpenOrders(acct, "")
			if len(open) > 0 {
				_, _ = e.CancelOrder(acct, open[rng.IntN(len(open))].ID)
			}
		case op < 16:
			_, _ = e.SetLeverage(acct, m, 1+rng.IntN(20))
		case op < 17:
			_, _ = e.ClosePosition(acct, m)
		case op < 18:
			mustMark(t, e, m, price.String())
		case op < 19:
			clock.Advance(time.Duration(1+rng.IntN(30)) * time.Second)
		default:
			if rng.IntN(10) == 0 {
				_, _ = e.CancelAll(acct, "")
			}
		}
		got := mustBalance(t, e, acct).OrderMargin
		if want := wantOrderMargin(t, e, acct); !got.Equal(want) {
			t.Fatalf("step %d: order margin %s, recomputed %s", i, got, want)
		}
	}
}

// placeCost is the least time one PlaceOrder of a resting buy and one
// look-up by client order id of the account's first order took, over
// batches, after the account has resting orders (and as many closed ones).
func placeCost(t *testing.T, resting int) time.Duration {
	t.Helper()
	e, _ := newEngine(t, time.Hour)
	const acct = "acct"
	if _, err := e.EnsureAccount(acct, d("1000000000")); err != nil {
		t.Fatal(err)
	}
	seq := 0
	place := func() {
		seq++
		if _, err := e.PlaceOrder(acct, paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Limit,
			Size: d("0.001"), Price: d("30000"), PostOnly: true, ClientOrderID: fmt.Sprintf("o%d", seq)}); err != nil {
			t.Fatal(err)
		}
	}
	for range resting {
		place()
	}
	for range resting { // closed orders: placed and cancelled
		place()
		if _, err := e.CancelOrder(acct, mustOrder(t, e, acct, fmt.Sprintf("o%d", seq)).ID); err != nil {
			t.Fatal(err)
		}
	}
	best := time.Duration(1 << 62)
	for range 7 {
		t0 := time.Now()
		for range 100 {
			place()
			mustOrder(t, e, acct, "o1")
		}
		best = min(best, time.Since(t0)/100)
	}
	return best
}

func mustOrder(t *testing.T, e *paper.Engine, acct, clientID string) paper.Order {
	t.Helper()
	o, err := e.OrderByClientID(acct, clientID)
	if err != nil {
		t.Fatalf("order %s: %v", clientID, err)
	}
	return o
}

// TestPlacementCostFlat: a placement and a look-up by client order id cost
// the same with 100 and with 10,000 resting orders (and as many closed):
// nothing on the way scans the account's orders.
func TestPlacementCostFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("times placements; skipped with -short")
	}
	small, large := placeCost(t, 100), placeCost(t, 10000)
	t.Logf("placement + look-up: %s with 100 resting orders, %s with 10,000", small, large)
	// 100 times the orders; the bound leaves room for a busy machine and
	// for caches, not for a scan (which costs about 100 times as much).
	if large > 3*small {
		t.Fatalf("placement + look-up took %s with 10,000 resting orders, %s with 100: its cost grows with the orders", large, small)
	}
}

// BenchmarkPlaceResting is a resting placement's cost (with its cancel) by
// how many orders rest already: flat from 100 to 10,000.
func BenchmarkPlaceResting(b *testing.B) {
	for _, resting := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("resting=%d", resting), func(b *testing.B) {
			e := paper.New(paper.Config{Seed: 1, Now: func() time.Time { return start }})
			if _, err := e.EnsureAccount("a", d("1000000000")); err != nil {
				b.Fatal(err)
			}
			req := paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Limit, Size: d("0.001"), Price: d("30000"), PostOnly: true}
			for range resting {
				if _, err := e.PlaceOrder("a", req); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				o, err := e.PlaceOrder("a", req)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.CancelOrder("a", o.ID); err != nil { // the count stays at resting
					b.Fatal(err)
				}
			}
		})
	}
}

// TestClosedOrdersForgottenOldestFirst: an account remembers its 10,000
// latest closed orders, by id and client order id; the one that ended
// first is forgotten first, and a live order never is.
func TestClosedOrdersForgottenOldestFirst(t *testing.T) {
	e, _ := newEngine(t, time.Hour)
	const acct = "acct"
	if _, err := e.EnsureAccount(acct, d("1000000000")); err != nil {
		t.Fatal(err)
	}
	req := func(id string) paper.OrderRequest {
		return paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Limit, Size: d("0.001"), Price: d("30000"), ClientOrderID: id}
	}
	resting := mustPlace(t, e, acct, req("resting"))
	var first, second paper.Order
	for i := range 10001 {
		o := mustPlace(t, e, acct, req(fmt.Sprintf("c%d", i)))
		if _, err := e.CancelOrder(acct, o.ID); err != nil {
			t.Fatal(err)
		}
		switch i {
		case 0:
			first = o
		case 1:
			second = o
		}
	}
	_, err := e.Order(acct, first.ID)
	wantErr(t, err, paper.ErrOrderNotFound)
	_, err = e.OrderByClientID(acct, "c0")
	wantErr(t, err, paper.ErrOrderNotFound)
	if o, err := e.Order(acct, second.ID); err != nil || o.Status != paper.Cancelled {
		t.Fatalf("second closed order: %+v, %v", o, err)
	}
	if o := mustOrder(t, e, acct, "c1"); o.ID != second.ID {
		t.Fatalf("client id c1 found %s, want %s", o.ID, second.ID)
	}
	if o := mustOrder(t, e, acct, "resting"); o.ID != resting.ID || o.Status != paper.Open {
		t.Fatalf("the live order was forgotten: %+v", o)
	}
	// The newest order with a reused client order id answers.
	again := mustPlace(t, e, acct, req("c5"))
	if o := mustOrder(t, e, acct, "c5"); o.ID != again.ID {
		t.Fatalf("client id c5 found %s, want the newest %s", o.ID, again.ID)
	}
}

// TestWalkStepCostFlat: a second of the price walk costs the same with
// 100 and with 10,000 orders resting away from mark: it looks only at the
// orders mark reaches.
func TestWalkStepCostFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("times walk steps; skipped with -short")
	}
	cost := func(resting int) time.Duration {
		e, clock := newEngine(t, time.Hour)
		if _, err := e.EnsureAccount("a", d("1000000000")); err != nil {
			t.Fatal(err)
		}
		for range resting {
			mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Limit, Size: d("0.001"), Price: d("30000")})
		}
		best := time.Duration(1 << 62)
		for range 5 {
			clock.Advance(200 * time.Second)
			t0 := time.Now()
			if _, err := e.MarkPrice(btc); err != nil { // replays 200 steps
				t.Fatal(err)
			}
			best = min(best, time.Since(t0))
		}
		return best
	}
	small, large := cost(100), cost(10000)
	t.Logf("200 walk steps: %s with 100 resting orders, %s with 10,000", small, large)
	if large > 3*small {
		t.Fatalf("200 walk steps took %s with 10,000 resting orders, %s with 100", large, small)
	}
}
