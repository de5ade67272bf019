package paper_test

import (
	"errors"
	"testing"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

func TestRestingLimitFillsWhenMarkCrosses(t *testing.T) {
	tests := []struct {
		name       string
		side       paper.Side
		price      string
		notYet     string // mark that must not fill it
		cross      string // mark that fills it
		fee        string // 0.5·price·2bps
		posSide    paper.PositionSide
		orderMargn string // 0.5·price/10
	}{
		{name: "buy fills when mark falls to price", side: paper.Buy, price: "59900", notYet: "59900.1", cross: "59900", fee: "5.99", posSide: paper.Long, orderMargn: "2995"},
		{name: "sell fills when mark rises to price", side: paper.Sell, price: "60100", notYet: "60099.9", cross: "60150", fee: "6.01", posSide: paper.Short, orderMargn: "3005"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newEngine(t, 0)
			mustMark(t, e, btc, "60000")
			o := mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: tt.side, Type: paper.Limit, Size: d("0.5"), Price: d(tt.price), ClientOrderID: "c1"})
			if o.Status != paper.Open || o.ClientOrderID != "c1" || o.ID == "" {
				t.Fatalf("placed %+v, want OPEN with id and client id", o)
			}
			eq(t, "order margin", mustBalance(t, e, "a").OrderMargin, d(tt.orderMargn))
			mustMark(t, e, btc, tt.notYet)
			if open, _ := e.OpenOrders("a", btc); len(open) != 1 {
				t.Fatalf("open orders = %d, want 1 before mark crosses", len(open))
			}

			mustMark(t, e, btc, tt.cross)
			got, err := e.Order("a", o.ID)
			if err != nil || got.Status != paper.Filled {
				t.Fatalf("order after cross = %+v, %v; want FILLED", got, err)
			}
			eq(t, "filled size", got.FilledSize, d("0.5"))
			eq(t, "avg fill price", got.AvgFillPrice, d(tt.price))
			fills, _ := e.Fills("a", btc, 0)
			if len(fills) != 1 || fills[0].Liquidity != paper.Maker || fills[0].OrderID != o.ID {
				t.Fatalf("fills = %+v, want one maker fill of the order", fills)
			}
			eq(t, "fill price", fills[0].Price, d(tt.price))
			eq(t, "fill fee", fills[0].Fee, d(tt.fee))
			pos, _ := e.Positions("a", btc)
			if len(pos) != 1 || pos[0].Side != tt.posSide {
				t.Fatalf("positions = %+v, want one %s", pos, tt.posSide)
			}
			eq(t, "entry", pos[0].EntryPrice, d(tt.price))
			b := mustBalance(t, e, "a")
			eq(t, "wallet", b.Wallet, d("10000").Sub(d(tt.fee)))
			eq(t, "order margin after fill", b.OrderMargin, decimal.Zero)
			if open, _ := e.OpenOrders("a", ""); len(open) != 0 {
				t.Fatalf("open orders after fill = %+v", open)
			}
		})
	}
}

func TestFeesAndPnLArithmetic(t *testing.T) {
	e, _ := newEngine(t, 0)
	// Best ask is mark+tick: buy 1 BTC exactly at 60000 as taker.
	mustMark(t, e, btc, "59999.9")
	buy := mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Limit, Size: d("1"), Price: d("60000")})
	if buy.Status != paper.Filled {
		t.Fatalf("crossing buy = %+v, want FILLED", buy)
	}
	eq(t, "buy fee", buy.Fee, d("30"))
	eq(t, "wallet after buy", mustBalance(t, e, "a").Wallet, d("9970"))

	mustMark(t, e, btc, "61000.1")
	b := mustBalance(t, e, "a")
	eq(t, "unrealized", b.UnrealizedPnL, d("1000.1"))
	eq(t, "equity", b.Equity, d("10970.1"))
	eq(t, "position margin", b.PositionMargin, d("6100.01"))
	eq(t, "free collateral", b.FreeCollateral, d("4870.09"))

	sell := mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Sell, Type: paper.Limit, Size: d("1"), Price: d("61000")})
	eq(t, "sell fee", sell.Fee, d("30.5"))
	b = mustBalance(t, e, "a")
	eq(t, "realized", b.RealizedPnL, d("1000"))
	eq(t, "fees", b.FeesPaid, d("60.5"))
	eq(t, "wallet", b.Wallet, d("10939.5"))
	eq(t, "equity", b.Equity, d("10939.5"))
	fills, _ := e.Fills("a", btc, 10)
	if len(fills) != 2 || fills[0].Side != paper.Sell {
		t.Fatalf("fills = %+v, want sell then buy (newest first)", fills)
	}
	eq(t, "fill realized", fills[0].RealizedPnL, d("1000"))
	if pos, _ := e.Positions("a", ""); len(pos) != 0 {
		t.Fatalf("positions = %+v, want flat", pos)
	}
}

func TestMarketOrderWalksBook(t *testing.T) {
	e, _ := newEngine(t, 0)
	mustMark(t, e, btc, "60000")
	if _, err := e.EnsureAccount("a", d("1000000")); err != nil {
		t.Fatal(err)
	}
	book, err := e.Orderbook(btc, 5)
	if err != nil {
		t.Fatal(err)
	}
	// Take all of level 0 and part of level 1.
	size := book.Asks[0].Size.Add(d("0.001"))
	o := mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Market, Size: size})
	if o.Status != paper.Filled {
		t.Fatalf("market order = %+v", o)
	}
	notional := book.Asks[0].Size.Mul(book.Asks[0].Price).Add(d("0.001").Mul(book.Asks[1].Price))
	eq(t, "avg price", o.AvgFillPrice, notional.DivRound(size, 8))
	eq(t, "fee", o.Fee, notional.Mul(d("0.0005")))
	fills, _ := e.Fills("a", "", 0)
	if len(fills) != 2 || fills[0].Liquidity != paper.Taker {
		t.Fatalf("fills = %+v, want two taker fills", fills)
	}
	eq(t, "wallet", mustBalance(t, e, "a").Wallet, d("1000000").Sub(o.Fee))
}

func TestStopPendingUntilTrigger(t *testing.T) {
	tests := []struct {
		name    string
		long    bool // open a 0.1 BTC long first
		req     paper.OrderRequest
		notYet  string
		trigger string
		wantPos string // position size after (signed)
	}{
		{name: "sell stop below mark", long: true, req: paper.OrderRequest{Side: paper.Sell, Type: paper.StopMarket, TriggerPrice: d("59000"), ReduceOnly: true}, notYet: "59000.1", trigger: "58990", wantPos: "0"},
		{name: "buy stop above mark", req: paper.OrderRequest{Side: paper.Buy, Type: paper.StopMarket, TriggerPrice: d("61000")}, notYet: "60999.9", trigger: "61000", wantPos: "0.1"},
		{name: "sell take-profit above mark", long: true, req: paper.OrderRequest{Side: paper.Sell, Type: paper.TakeProfitMarket, TriggerPrice: d("61000"), ReduceOnly: true}, notYet: "60999.9", trigger: "61000", wantPos: "0"},
		{name: "buy take-profit below mark", req: paper.OrderRequest{Side: paper.Buy, Type: paper.TakeProfitMarket, TriggerPrice: d("59000")}, notYet: "59000.1", trigger: "59000", wantPos: "0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newEngine(t, 0)
			mustMark(t, e, btc, "60000")
			if tt.long {
				mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Market, Size: d("0.1")})
			}
			req := tt.req
			req.Market, req.Size = btc, d("0.1")
			o := mustPlace(t, e, "a", req)
			if o.Status != paper.Pending {
				t.Fatalf("placed = %+v, want PENDING", o)
			}
			eq(t, "trigger", o.TriggerPrice, req.TriggerPrice)
			mustMark(t, e, btc, tt.notYet)
			if got, _ := e.Order("a", o.ID); got.Status != paper.Pending {
				t.Fatalf("before trigger = %s, want PENDING", got.Status)
			}
			mustMark(t, e, btc, tt.trigger)
			got, _ := e.Order("a", o.ID)
			if got.Status != paper.Filled {
				t.Fatalf("after trigger = %+v, want FILLED", got)
			}
			eq(t, "filled", got.FilledSize, d("0.1"))
			pos, _ := e.Positions("a", btc)
			size := decimal.Zero
			if len(pos) == 1 {
				size = pos[0].Size
			}
			eq(t, "position", size, d(tt.wantPos))
		})
	}
}

func TestTriggeredStopWithoutMarginIsRejected(t *testing.T) {
	e, _ := newEngine(t, 0)
	mustMark(t, e, btc, "60000")
	o := mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.StopMarket, Size: d("1"), TriggerPrice: d("61000")})
	// Use up the margin with a resting order before the stop fires.
	mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Limit, Size: d("1.5"), Price: d("50000")})
	mustMark(t, e, btc, "61000")
	got, _ := e.Order("a", o.ID)
	if got.Status != paper.Rejected || got.Reason == "" {
		t.Fatalf("stop = %+v, want REJECTED with a reason", got)
	}
}

func TestPostOnly(t *testing.T) {
	tests := []struct {
		name  string
		side  paper.Side
		price string
		err   error
	}{
		{name: "buy at best ask crosses", side: paper.Buy, price: "60000.1", err: paper.ErrPostOnlyWouldCross},
		{name: "buy above ask crosses", side: paper.Buy, price: "60100", err: paper.ErrPostOnlyWouldCross},
		{name: "sell at best bid crosses", side: paper.Sell, price: "59999.9", err: paper.ErrPostOnlyWouldCross},
		{name: "buy at mark rests", side: paper.Buy, price: "60000"},
		{name: "sell at mark rests", side: paper.Sell, price: "60000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newEngine(t, 0)
			mustMark(t, e, btc, "60000")
			o, err := e.PlaceOrder("a", paper.OrderRequest{Market: btc, Side: tt.side, Type: paper.Limit, Size: d("0.01"), Price: d(tt.price), PostOnly: true})
			open, _ := e.OpenOrders("a", "")
			if tt.err != nil {
				wantErr(t, err, tt.err)
				if len(open) != 0 {
					t.Fatalf("rejected order left %+v", open)
				}
				return
			}
			if err != nil || o.Status != paper.Open || len(open) != 1 {
				t.Fatalf("got %+v, %v, open %d; want OPEN", o, err, len(open))
			}
		})
	}
}

func TestReduceOnly(t *testing.T) {
	tests := []struct {
		name     string
		position string // signed BTC position to open first
		side     paper.Side
		size     string
		err      error
		wantSize string // order size after the cap
	}{
		{name: "flat is rejected", position: "0", side: paper.Sell, size: "0.1", err: paper.ErrReduceOnly},
		{name: "same side would grow", position: "0.5", side: paper.Buy, size: "0.1", err: paper.ErrReduceOnly},
		{name: "short cannot grow", position: "-0.5", side: paper.Sell, size: "0.1", err: paper.ErrReduceOnly},
		{name: "smaller reduces", position: "0.5", side: paper.Sell, size: "0.2", wantSize: "0.2"},
		{name: "larger is capped, never flips", position: "0.5", side: paper.Sell, size: "2", wantSize: "0.5"},
		{name: "short capped", position: "-0.5", side: paper.Buy, size: "1", wantSize: "0.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newEngine(t, 0)
			mustMark(t, e, btc, "60000")
			if p := d(tt.position); !p.IsZero() {
				side := paper.Buy
				if p.IsNegative() {
					side = paper.Sell
				}
				mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: side, Type: paper.Market, Size: p.Abs()})
			}
			o, err := e.PlaceOrder("a", paper.OrderRequest{Market: btc, Side: tt.side, Type: paper.Market, Size: d(tt.size), ReduceOnly: true})
			if tt.err != nil {
				wantErr(t, err, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "order size", o.Size, d(tt.wantSize))
			eq(t, "filled", o.FilledSize, d(tt.wantSize))
			pos, _ := e.Positions("a", btc)
			left := d(tt.position).Abs().Sub(d(tt.wantSize))
			if left.IsZero() != (len(pos) == 0) {
				t.Fatalf("positions = %+v, want %s left", pos, left)
			}
		})
	}
}

func TestRestingReduceOnlyCancelledWhenFlat(t *testing.T) {
	e, _ := newEngine(t, 0)
	mustMark(t, e, btc, "60000")
	mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Market, Size: d("0.2")})
	tp := mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Sell, Type: paper.Limit, Size: d("0.2"), Price: d("61000"), ReduceOnly: true})
	if _, err := e.ClosePosition("a", btc); err != nil {
		t.Fatal(err)
	}
	mustMark(t, e, btc, "61000")
	got, _ := e.Order("a", tp.ID)
	if got.Status != paper.Cancelled || got.FilledSize.Sign() != 0 {
		t.Fatalf("reduce-only order = %+v, want CANCELLED unfilled", got)
	}
	if pos, _ := e.Positions("a", btc); len(pos) != 0 {
		t.Fatalf("positions = %+v, want flat (never flipped)", pos)
	}
}

func TestInsufficientMargin(t *testing.T) {
	tests := []struct {
		name     string
		leverage int
		req      paper.OrderRequest
	}{
		{name: "market too large", leverage: 10, req: paper.OrderRequest{Type: paper.Market, Side: paper.Buy, Size: d("2")}},
		{name: "limit too large", leverage: 10, req: paper.OrderRequest{Type: paper.Limit, Side: paper.Sell, Size: d("1.7"), Price: d("61000")}},
		{name: "low leverage", leverage: 1, req: paper.OrderRequest{Type: paper.Limit, Side: paper.Buy, Size: d("0.2"), Price: d("59000")}},
		{name: "stop too large", leverage: 50, req: paper.OrderRequest{Type: paper.StopMarket, Side: paper.Buy, Size: d("9"), TriggerPrice: d("61000")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newEngine(t, 0)
			mustMark(t, e, btc, "60000")
			if _, err := e.SetLeverage("a", btc, tt.leverage); err != nil {
				t.Fatal(err)
			}
			req := tt.req
			req.Market = btc
			_, err := e.PlaceOrder("a", req)
			wantErr(t, err, paper.ErrInsufficientMargin)
			eq(t, "wallet", mustBalance(t, e, "a").Wallet, d("10000"))
		})
	}
}

func TestInvalidInput(t *testing.T) {
	lim := func(size, price string) paper.OrderRequest {
		return paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Limit, Size: d(size), Price: d(price)}
	}
	tests := []struct {
		name string
		call func(e *paper.Engine) error
		err  error
	}{
		{name: "unknown market", call: func(e *paper.Engine) error {
			_, err := e.PlaceOrder("a", paper.OrderRequest{Market: "DOGE-USD-PERP", Side: paper.Buy, Type: paper.Market, Size: d("1")})
			return err
		}, err: paper.ErrUnknownMarket},
		{name: "size off lot", call: func(e *paper.Engine) error { _, err := e.PlaceOrder("a", lim("0.0015", "60000")); return err }, err: paper.ErrInvalidOrder},
		{name: "zero size", call: func(e *paper.Engine) error { _, err := e.PlaceOrder("a", lim("0", "60000")); return err }, err: paper.ErrInvalidOrder},
		{name: "negative size", call: func(e *paper.Engine) error { _, err := e.PlaceOrder("a", lim("-1", "60000")); return err }, err: paper.ErrInvalidOrder},
		{name: "price off tick", call: func(e *paper.Engine) error { _, err := e.PlaceOrder("a", lim("0.01", "60000.05")); return err }, err: paper.ErrInvalidOrder},
		{name: "zero price", call: func(e *paper.Engine) error { _, err := e.PlaceOrder("a", lim("0.01", "0")); return err }, err: paper.ErrInvalidOrder},
		{name: "below min notional", call: func(e *paper.Engine) error { _, err := e.PlaceOrder("a", lim("0.001", "5000")); return err }, err: paper.ErrInvalidOrder},
		{name: "bad side", call: func(e *paper.Engine) error {
			r := lim("0.01", "60000")
			r.Side = "HOLD"
			_, err := e.PlaceOrder("a", r)
			return err
		}, err: paper.ErrInvalidOrder},
		{name: "bad type", call: func(e *paper.Engine) error {
			r := lim("0.01", "60000")
			r.Type = "ICEBERG"
			_, err := e.PlaceOrder("a", r)
			return err
		}, err: paper.ErrInvalidOrder},
		{name: "post-only market", call: func(e *paper.Engine) error {
			_, err := e.PlaceOrder("a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Market, Size: d("0.01"), PostOnly: true})
			return err
		}, err: paper.ErrInvalidOrder},
		{name: "stop without trigger", call: func(e *paper.Engine) error {
			_, err := e.PlaceOrder("a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.StopMarket, Size: d("0.01")})
			return err
		}, err: paper.ErrInvalidOrder},
		{name: "leverage zero", call: func(e *paper.Engine) error { _, err := e.SetLeverage("a", btc, 0); return err }, err: paper.ErrInvalidOrder},
		{name: "leverage above max", call: func(e *paper.Engine) error { _, err := e.SetLeverage("a", btc, 51); return err }, err: paper.ErrInvalidOrder},
		{name: "leverage unknown market", call: func(e *paper.Engine) error { _, err := e.SetLeverage("a", "X", 5); return err }, err: paper.ErrUnknownMarket},
		{name: "empty account", call: func(e *paper.Engine) error { _, err := e.Balance(""); return err }, err: paper.ErrInvalidRequest},
		{name: "negative starting balance", call: func(e *paper.Engine) error { _, err := e.EnsureAccount("b", d("-1")); return err }, err: paper.ErrInvalidRequest},
		{name: "book too deep", call: func(e *paper.Engine) error { _, err := e.Orderbook(btc, 501); return err }, err: paper.ErrInvalidRequest},
		{name: "candle interval", call: func(e *paper.Engine) error { _, err := e.Candles(btc, 0, 10); return err }, err: paper.ErrInvalidRequest},
		{name: "candle limit", call: func(e *paper.Engine) error { _, err := e.Candles(btc, 1, 1501); return err }, err: paper.ErrInvalidRequest},
		{name: "mark non-positive", call: func(e *paper.Engine) error { _, err := e.SetMarkPrice(btc, d("0")); return err }, err: paper.ErrInvalidRequest},
		{name: "mark unknown market", call: func(e *paper.Engine) error { _, err := e.MarkPrice("nope"); return err }, err: paper.ErrUnknownMarket},
		{name: "market too large for book", call: func(e *paper.Engine) error {
			_, err := e.PlaceOrder("a", paper.OrderRequest{Market: btc, Side: paper.Sell, Type: paper.Market, Size: d("100000")})
			return err
		}, err: paper.ErrInvalidOrder},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newEngine(t, 0)
			mustMark(t, e, btc, "60000")
			wantErr(t, tt.call(e), tt.err)
		})
	}
}

func TestCancel(t *testing.T) {
	e, _ := newEngine(t, 0)
	mustMark(t, e, btc, "60000")
	limit := func(market, price, size string) paper.Order {
		return mustPlace(t, e, "a", paper.OrderRequest{Market: market, Side: paper.Buy, Type: paper.Limit, Size: d(size), Price: d(price)})
	}
	o1 := limit(btc, "59000", "0.01")
	limit(btc, "58000", "0.01")
	stop := mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.StopMarket, Size: d("0.01"), TriggerPrice: d("65000")})
	limit("ETH-USD-PERP", "2000", "0.1")

	got, err := e.CancelOrder("a", o1.ID)
	if err != nil || got.Status != paper.Cancelled {
		t.Fatalf("cancel = %+v, %v", got, err)
	}
	_, err = e.CancelOrder("a", o1.ID)
	wantErr(t, err, paper.ErrOrderNotFound, paper.ErrOrderClosed)
	_, err = e.CancelOrder("a", "nope")
	wantErr(t, err, paper.ErrOrderNotFound)
	if errors.Is(err, paper.ErrOrderClosed) {
		t.Fatalf("unknown order reported closed: %v", err)
	}
	_, err = e.CancelOrder("b", stop.ID)
	wantErr(t, err, paper.ErrOrderNotFound)

	n, err := e.CancelAll("a", "btc-usd-perp")
	if err != nil || n != 2 {
		t.Fatalf("cancel all BTC = %d, %v; want 2 (limit and stop)", n, err)
	}
	if open, _ := e.OpenOrders("a", ""); len(open) != 1 || open[0].Market != "ETH-USD-PERP" {
		t.Fatalf("open = %+v, want the ETH order", open)
	}
	if n, _ := e.CancelAll("a", ""); n != 1 {
		t.Fatalf("cancel all = %d, want 1", n)
	}
	_, err = e.CancelAll("a", "nope")
	wantErr(t, err, paper.ErrUnknownMarket)
	eq(t, "order margin", mustBalance(t, e, "a").OrderMargin, decimal.Zero)
}

func TestClosePosition(t *testing.T) {
	e, _ := newEngine(t, 0)
	mustMark(t, e, btc, "60000")
	mustMark(t, e, "ETH-USD-PERP", "3000")
	mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Market, Size: d("0.5")})
	mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Market, Size: d("0.3")})
	mustPlace(t, e, "a", paper.OrderRequest{Market: "ETH-USD-PERP", Side: paper.Sell, Type: paper.Market, Size: d("2")})

	res, err := e.ClosePosition("a", btc)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "closed size", res.ClosedSize, d("0.8"))
	fills, _ := e.Fills("a", btc, 0)
	notional, size := decimal.Zero, decimal.Zero
	for _, f := range fills {
		if f.OrderID == res.OrderID {
			notional, size = notional.Add(f.Size.Mul(f.Price)), size.Add(f.Size)
		}
	}
	eq(t, "close fills size", size, d("0.8"))
	eq(t, "avg close price", res.AvgClosePrice, notional.DivRound(size, 8))
	if !res.AvgClosePrice.LessThan(d("60000")) {
		t.Errorf("avg close %s, want below mark (sold into bids)", res.AvgClosePrice)
	}
	pos, _ := e.Positions("a", "")
	if len(pos) != 1 || pos[0].Market != "ETH-USD-PERP" || pos[0].Side != paper.Short {
		t.Fatalf("positions = %+v, want only the ETH short", pos)
	}
	res, err = e.ClosePosition("a", btc)
	if err != nil || !res.ClosedSize.IsZero() || res.OrderID != "" {
		t.Fatalf("close flat = %+v, %v; want zeros", res, err)
	}
}

func TestWalletMatchesFills(t *testing.T) {
	e, c := newEngine(t, 0)
	steps := []paper.OrderRequest{
		{Market: btc, Side: paper.Buy, Type: paper.Market, Size: d("0.05")},
		{Market: btc, Side: paper.Buy, Type: paper.Market, Size: d("0.03")},
		{Market: btc, Side: paper.Sell, Type: paper.Market, Size: d("0.02")},
		{Market: btc, Side: paper.Sell, Type: paper.Market, Size: d("0.1")}, // flips short
		{Market: "SOL-USD-PERP", Side: paper.Buy, Type: paper.Market, Size: d("3")},
		{Market: btc, Side: paper.Buy, Type: paper.Market, Size: d("0.04")},
		{Market: "SOL-USD-PERP", Side: paper.Sell, Type: paper.Market, Size: d("3")},
	}
	for _, r := range steps {
		mustPlace(t, e, "a", r)
		c.Advance(37 * 1e9)
	}
	fills, _ := e.Fills("a", "", 1000)
	want := d("10000")
	for _, f := range fills {
		want = want.Add(f.RealizedPnL).Sub(f.Fee)
	}
	b := mustBalance(t, e, "a")
	eq(t, "wallet", b.Wallet, want)
	pos, _ := e.Positions("a", "")
	if len(pos) != 0 {
		t.Fatalf("positions = %+v, want flat", pos)
	}
	eq(t, "equity when flat", b.Equity, b.Wallet)
}

// TestCrossingLimitMarginAtFillPrices: a SELL limit far below the bid
// fills at the book, so its margin is checked at the book's prices, not
// at its limit: free collateral never goes negative.
func TestCrossingLimitMarginAtFillPrices(t *testing.T) {
	e, _ := newEngine(t, 0)
	mustMark(t, e, btc, "60000")
	if _, err := e.SetLeverage("a", btc, 10); err != nil {
		t.Fatal(err)
	}
	book, err := e.Orderbook(btc, 5)
	if err != nil {
		t.Fatal(err)
	}
	// Within the first level: 1.7 BTC near 60000 needs about 10,200 at
	// 10x, more than the 10,000 wallet; at the 1,000 limit it needs 170.
	size := d("1.7")
	if book.Bids[0].Size.LessThan(size) {
		t.Fatalf("the test needs %s BTC on the best bid, the book has %+v", size, book.Bids[0])
	}
	_, err = e.PlaceOrder("a", paper.OrderRequest{Market: btc, Type: paper.Limit, Side: paper.Sell, Size: size, Price: d("1000")})
	wantErr(t, err, paper.ErrInsufficientMargin)
	b := mustBalance(t, e, "a")
	eq(t, "wallet", b.Wallet, d("10000"))
	if b.FreeCollateral.IsNegative() {
		t.Fatalf("free collateral went to %s", b.FreeCollateral)
	}
	// What fits at the book's prices still fills at the book.
	o := mustPlace(t, e, "a", paper.OrderRequest{Market: btc, Type: paper.Limit, Side: paper.Sell, Size: d("1"), Price: d("1000")})
	if o.Status != paper.Filled || o.AvgFillPrice.LessThan(d("59000")) {
		t.Fatalf("crossing sell = %+v, want filled near the bid", o)
	}
	if b := mustBalance(t, e, "a"); b.FreeCollateral.IsNegative() {
		t.Fatalf("free collateral went to %s", b.FreeCollateral)
	}
}
