package okx

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/okx/sim"
	"github.com/shopspring/decimal"
)

// above is a price a tenth above the mark, on the tick.
func above(t *testing.T, f *fixture, m connector.Market, factor string) string {
	t.Helper()
	mark, err := f.a.GetMarkPrice(context.Background(), f.cred, m)
	if err != nil {
		t.Fatal(err)
	}
	p := mark.MarkPrice.Mul(d(factor))
	return p.Sub(p.Mod(m.TickSize)).String()
}

// TestPostOnlyWouldTake: OKX accepts a post-only buy above the ask and
// cancels it with cancelSource 31; the adapter reads it back and answers
// POST_ONLY_REJECTED, never OPEN, within one read-back.
func TestPostOnlyWouldTake(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTC-USDT-SWAP")
	var waited time.Duration
	f.a.c.Wait = func(_ context.Context, d time.Duration) error { waited += d; return nil }
	_, err := f.a.PlaceLimitOrder(ctx, f.cred, limitOrder(m, contract.Buy, "0.01", above(t, f, m, "1.1"), true, "po-1"))
	if ce := testenv.WantUpstream(t, err, contract.ReasonPostOnlyRejected); ce.ExchangeMessage != "cancelSource=31" {
		t.Errorf("error %+v", ce)
	}
	if n := f.sim.Hits(http.MethodGet, "/api/v5/trade/order"); n != 1 {
		t.Errorf("%d read-backs, want 1 (the first read shows it cancelled)", n)
	}
	if waited > time.Second {
		t.Errorf("waited %s, more than the 1 s bound", waited)
	}
	// A post-only order that rests is OPEN after reads spanning the bound.
	waited = 0
	r, err := f.a.PlaceLimitOrder(ctx, f.cred, limitOrder(m, contract.Buy, "0.01", above(t, f, m, "0.9"), true, "po-2"))
	if err != nil || r.Status != contract.StatusOpen {
		t.Fatalf("resting post-only: %+v %v", r, err)
	}
	if waited == 0 || waited > time.Second {
		t.Errorf("resting post-only read back over %s, want within (0, 1 s]", waited)
	}
	// Found later by its clientOrderId, the rejected one is REJECTED.
	fo, found, err := f.a.FindOrder(ctx, f.cred, m, "po-1")
	if err != nil || !found || fo.Status != contract.StatusRejected {
		t.Errorf("find po-1: %+v %v %v", fo, found, err)
	}
}

// TestBatchOfTen: ten orders are one batch-orders call; the one OKX
// refuses (reduce-only without a position) is reported alone in its slot,
// a post-only one that would take is POST_ONLY_REJECTED in its slot, the
// others stand.
func TestBatchOfTen(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTC-USDT-SWAP")
	low := above(t, f, m, "0.9")
	var orders []connector.OrderRequest
	for i := range 10 {
		o := limitOrder(m, contract.Buy, "0.01", low, false, "batch-"+strconv.Itoa(i))
		switch i {
		case 4:
			o.Side, o.ReduceOnly = contract.Sell, true
		case 7:
			o.Price, o.PostOnly = d(above(t, f, m, "1.1")), true
		}
		orders = append(orders, o)
	}
	res, err := f.a.PlaceBatchOrder(ctx, f.cred, orders)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.sim.Hits(http.MethodPost, "/api/v5/trade/batch-orders"); n != 1 {
		t.Errorf("%d batch calls, want 1", n)
	}
	for i, r := range res {
		switch i {
		case 4:
			if r.Status != contract.StatusRejected || r.Error == nil || r.Error.ExchangeCode != "51169" || r.OrderID != "" {
				t.Errorf("slot 4: %+v", r)
			}
		case 7:
			if r.Status != contract.StatusRejected || r.Error == nil || r.Error.Reason != contract.ReasonPostOnlyRejected {
				t.Errorf("slot 7: %+v", r)
			}
		default:
			if r.Status != contract.StatusOpen || r.OrderID == "" || r.Error != nil {
				t.Errorf("slot %d: %+v", i, r)
			}
		}
	}
	open, _ := f.a.GetOrders(ctx, f.cred, &m)
	if len(open.Orders) != 8 {
		t.Errorf("%d open orders, want 8", len(open.Orders))
	}
}

// TestBatchOverTwenty: 25 orders are two calls of 20 and 5, in order.
func TestBatchOverTwenty(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	m := f.market(t, "BTC-USDT-SWAP")
	low := d(above(t, f, m, "0.9"))
	var orders []connector.OrderRequest
	for i := range 25 {
		orders = append(orders, limitOrder(m, contract.Buy, "0.01", low.Sub(decimal.NewFromInt(int64(i))).String(), false, "o"+strconv.Itoa(i)))
	}
	res, err := f.a.PlaceBatchOrder(context.Background(), f.cred, orders)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.sim.Hits(http.MethodPost, "/api/v5/trade/batch-orders"); n != 2 {
		t.Errorf("%d batch calls, want 2", n)
	}
	open, _ := f.a.GetOrders(context.Background(), f.cred, &m)
	price := map[string]string{}
	for _, o := range open.Orders {
		price[o.ID] = o.Price.String()
	}
	for i, r := range res {
		if want := low.Sub(decimal.NewFromInt(int64(i))).String(); r.Status != contract.StatusOpen || price[r.OrderID] != want {
			t.Errorf("slot %d: %+v at %s, want %s", i, r, price[r.OrderID], want)
		}
	}
}

// TestCancelAllTrueCount: 25 limit orders and 12 stops take two
// cancel-batch-orders calls (20 + 5) and two cancel-algos calls (10 + 2);
// the count is what OKX confirmed, so an order that OKX could not cancel
// is not counted.
func TestCancelAllTrueCount(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTC-USDT-SWAP")
	if _, err := f.a.PlaceMarketOrder(ctx, f.cred, marketOrder(m, contract.Buy, "0.05", false, "pos")); err != nil {
		t.Fatal(err)
	}
	low := d(above(t, f, m, "0.9"))
	for i := range 25 {
		if _, err := f.a.PlaceLimitOrder(ctx, f.cred, limitOrder(m, contract.Buy, "0.0001", low.Sub(decimal.NewFromInt(int64(i))).String(), false, "c"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	trigger := d(above(t, f, m, "0.5"))
	for i := range 12 {
		if _, err := f.a.PlaceStopOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.Stop, Side: contract.Sell,
			Size: d("0.0001"), TriggerPrice: trigger.Sub(decimal.NewFromInt(int64(i))), ReduceOnly: true, ClientOrderID: "s" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// One order goes away between the listing and the cancel: OKX answers
	// 51400 for it.
	f.sim.RewriteNext(http.MethodPost, "/api/v5/trade/cancel-batch-orders", func(data []byte) []byte {
		return []byte(strings.Replace(string(data), `"sCode":"0","sMsg":""`, `"sCode":"51400","sMsg":"gone"`, 1))
	})
	n, err := f.a.CancelAllOrders(ctx, f.cred, m)
	if err != nil || n != 36 {
		t.Fatalf("cancelled %d, %v; want 36 (37 listed, 1 refused)", n, err)
	}
	if c, a := f.sim.Hits(http.MethodPost, "/api/v5/trade/cancel-batch-orders"), f.sim.Hits(http.MethodPost, "/api/v5/trade/cancel-algos"); c != 2 || a != 2 {
		t.Errorf("%d cancel-batch-orders and %d cancel-algos calls, want 2 and 2", c, a)
	}
	if n, err := f.a.CancelAllOrders(ctx, f.cred, m); err != nil || n != 0 {
		t.Errorf("second cancel all: %d %v", n, err)
	}
}

// TestAccountModes: a Spot-mode account's credential is valid, but every
// placement answers EXCHANGE_ERROR naming the account mode to switch to,
// without sending the order; so does long/short position mode.
func TestAccountModes(t *testing.T) {
	for _, tc := range []struct {
		acctLv, posMode, want string
	}{
		{"1", "net_mode", "switch the account mode to Futures mode"},
		{"2", "long_short_mode", "switch the position mode to One-way"},
	} {
		t.Run(tc.acctLv+" "+tc.posMode, func(t *testing.T) {
			f := newFixture(t, sim.Config{}, nil)
			f.sim.SetAccountMode(testKey, tc.acctLv, tc.posMode)
			ctx := context.Background()
			m := f.market(t, "BTC-USDT-SWAP")
			if ok, err := f.a.TestCredentials(ctx, f.cred); !ok || err != nil {
				t.Fatalf("credentials: %v %v, want valid", ok, err)
			}
			errs := []error{}
			_, err := f.a.PlaceLimitOrder(ctx, f.cred, limitOrder(m, contract.Buy, "0.01", "50000", false, "l"))
			errs = append(errs, err)
			_, err = f.a.PlaceMarketOrder(ctx, f.cred, marketOrder(m, contract.Buy, "0.01", false, "m"))
			errs = append(errs, err)
			_, err = f.a.PlaceBatchOrder(ctx, f.cred, []connector.OrderRequest{limitOrder(m, contract.Buy, "0.01", "50000", false, "b")})
			errs = append(errs, err)
			_, err = f.a.CloseAllPositions(ctx, f.cred, m)
			errs = append(errs, err)
			for i, err := range errs {
				ce := testenv.WantUpstream(t, err, contract.ReasonPermissionDenied)
				if !strings.Contains(ce.Message, tc.want) {
					t.Errorf("call %d: message %q does not say %q", i, ce.Message, tc.want)
				}
			}
			if n := f.sim.Hits(http.MethodPost, "/api/v5/trade/order") + f.sim.Hits(http.MethodPost, "/api/v5/trade/batch-orders"); n != 0 {
				t.Errorf("%d orders sent", n)
			}
		})
	}
}

// TestAccountModeChangedUnderUs: the account switches to Spot mode after
// the connector cached Futures mode; OKX refuses the order with 51010,
// which says what to do, and the next order is refused before sending.
func TestAccountModeChangedUnderUs(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTC-USDT-SWAP")
	if _, err := f.a.PlaceLimitOrder(ctx, f.cred, limitOrder(m, contract.Buy, "0.01", "50000", false, "a1")); err != nil {
		t.Fatal(err)
	}
	f.sim.SetAccountMode(testKey, "1", "net_mode")
	_, err := f.a.PlaceLimitOrder(ctx, f.cred, limitOrder(m, contract.Buy, "0.01", "50000", false, "a2"))
	if ce := testenv.WantUpstream(t, err, contract.ReasonPermissionDenied); ce.ExchangeCode != "51010" || !strings.Contains(ce.Message, "Futures mode") {
		t.Errorf("51010: %+v", ce)
	}
	sent := f.sim.Hits(http.MethodPost, "/api/v5/trade/order")
	_, err = f.a.PlaceLimitOrder(ctx, f.cred, limitOrder(m, contract.Buy, "0.01", "50000", false, "a3"))
	if ce := testenv.WantUpstream(t, err, contract.ReasonPermissionDenied); !strings.Contains(ce.Message, "Spot mode") {
		t.Errorf("after 51010: %+v", ce)
	}
	if f.sim.Hits(http.MethodPost, "/api/v5/trade/order") != sent {
		t.Error("an order was sent after OKX reported the account mode")
	}
}

// TestUpstreamRateLimited: HTTP 429 and code 50011 become
// UPSTREAM_RATE_LIMITED with retryAfter, and nothing more is sent to that
// endpoint until then; other endpoints go on.
func TestUpstreamRateLimited(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	tests := []struct {
		name  string
		fail  sim.Failure
		retry int
	}{
		{"429 with Retry-After", sim.Failure{Status: 429, Code: "50011", Msg: "Too Many Requests", RetryAfter: 7}, 7},
		{"429 without Retry-After", sim.Failure{Status: 429, Code: "50011", Msg: "Too Many Requests"}, 2},
		{"50011 on HTTP 200", sim.Failure{Code: "50011", Msg: "Rate limit reached. Please refer to API documentation and throttle requests accordingly."}, 2},
		{"50061 sub-account order rate", sim.Failure{Code: "50061", Msg: "Sub-account rate limit exceeded"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := testenv.NewClock(start)
			f := newFixture(t, sim.Config{Now: clk.Now}, clk.Now)
			m := f.market(t, "BTC-USDT-SWAP")
			f.sim.FailNext(http.MethodGet, "/api/v5/market/books", tt.fail)
			_, err := f.a.GetOrderbook(context.Background(), f.cred, m, 5)
			ce := testenv.WantUpstream(t, err, contract.ReasonUpstreamRateLimited)
			if ce.RetryAfterSeconds != tt.retry || ce.ExchangeCode != tt.fail.Code {
				t.Errorf("retryAfter %d code %s, want %d %s", ce.RetryAfterSeconds, ce.ExchangeCode, tt.retry, tt.fail.Code)
			}
			before := f.sim.Hits(http.MethodGet, "/api/v5/market/books")
			_, err = f.a.GetOrderbook(context.Background(), f.cred, m, 5)
			testenv.WantUpstream(t, err, contract.ReasonUpstreamRateLimited)
			if f.sim.Hits(http.MethodGet, "/api/v5/market/books") != before {
				t.Errorf("a request was sent while rate-limited")
			}
			if _, err := f.a.GetFundingRate(context.Background(), f.cred, m); err != nil {
				t.Errorf("another endpoint: %v", err)
			}
			clk.Advance(time.Duration(tt.retry) * time.Second)
			if _, err := f.a.GetOrderbook(context.Background(), f.cred, m, 5); err != nil {
				t.Errorf("after the wait: %v", err)
			}
		})
	}
}

// TestClientSideLimit: past an endpoint's budget (10 a 2 s for
// mark-price per instrument) the connector waits for room instead of
// sending into OKX's limit.
func TestClientSideLimit(t *testing.T) {
	clk := testenv.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := newFixture(t, sim.Config{Now: clk.Now}, clk.Now)
	var waits []time.Duration
	f.a.c.Wait = func(_ context.Context, d time.Duration) error { waits = append(waits, d); clk.Advance(d); return nil }
	m := f.market(t, "BTC-USDT-SWAP")
	for i := range 12 {
		if _, err := f.a.GetMarkPrice(context.Background(), f.cred, m); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if len(waits) != 1 || waits[0] != 2*time.Second {
		t.Errorf("waits %v, want one of 2s (the 11th call)", waits)
	}
}

// TestFindOrderByClientID: a gateway UUID, an id with other characters
// and the legs of an oco pair are all found by the id the gateway placed
// them with; an id never placed is not found.
func TestFindOrderByClientID(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTC-USDT-SWAP")
	uuid := "0b6b2c3e-8a0f-4c8e-9d51-1f4a8f0b2c7d"
	mo, err := f.a.PlaceMarketOrder(ctx, f.cred, marketOrder(m, contract.Buy, "0.02", false, uuid))
	if err != nil {
		t.Fatal(err)
	}
	fo, found, err := f.a.FindOrder(ctx, f.cred, m, uuid)
	if err != nil || !found || fo.ID != mo.OrderID || fo.Status != contract.StatusFilled || !fo.FilledSize.Equal(d("0.02")) ||
		!fo.AvgPrice.Equal(mo.FilledPrice) || !fo.Fee.Equal(mo.Fee) {
		t.Errorf("find uuid: %+v %v %v; placed %+v", fo, found, err, mo)
	}
	lo, err := f.a.PlaceLimitOrder(ctx, f.cred, limitOrder(m, contract.Buy, "0.01", "50000", false, "client_id.with:odd/chars"))
	if err != nil {
		t.Fatal(err)
	}
	if fo, found, err := f.a.FindOrder(ctx, f.cred, m, "client_id.with:odd/chars"); err != nil || !found || fo.ID != lo.OrderID || fo.Status != contract.StatusOpen {
		t.Errorf("find odd id: %+v %v %v", fo, found, err)
	}
	tp, sl := d("200000"), d("50000")
	pr, err := f.a.PlaceProtectionOrders(ctx, f.cred, connector.ProtectionRequest{Market: m, PositionSide: contract.Long, Size: d("0.02"),
		TakeProfit: &tp, StopLoss: &sl, ClientOrderID: uuid[:32]})
	if err != nil {
		t.Fatal(err)
	}
	for _, leg := range []string{"-tp", "-sl"} {
		fo, found, err := f.a.FindOrder(ctx, f.cred, m, uuid[:32]+leg)
		if err != nil || !found || fo.ID != pr.TPOrderID || fo.Status != contract.StatusPending {
			t.Errorf("find leg %s: %+v %v %v", leg, fo, found, err)
		}
	}
	if _, found, err := f.a.FindOrder(ctx, f.cred, m, "never-placed"); err != nil || found {
		t.Errorf("never placed: %v %v", found, err)
	}
	if _, found, err := f.a.FindOrder(ctx, f.cred, m, "never-placed-tp"); err != nil || found {
		t.Errorf("never placed leg: %v %v", found, err)
	}
}

// TestProtectionLinked: a TP+SL pair is one oco order; when the stop
// fires the pair is done, nothing of it is left, and the position is
// closed. A single leg is a conditional order.
func TestProtectionLinked(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTC-USDT-SWAP")
	if !f.a.LinksProtection() {
		t.Fatal("OKX links protection pairs")
	}
	if _, err := f.a.PlaceMarketOrder(ctx, f.cred, marketOrder(m, contract.Buy, "0.02", false, "open")); err != nil {
		t.Fatal(err)
	}
	mark, _ := f.a.GetMarkPrice(ctx, f.cred, m)
	tp := mark.MarkPrice.Add(d("10000"))
	sl := mark.MarkPrice.Sub(d("10000"))
	pr, err := f.a.PlaceProtectionOrders(ctx, f.cred, connector.ProtectionRequest{Market: m, PositionSide: contract.Long, Size: d("0.02"),
		TakeProfit: &tp, StopLoss: &sl, ClientOrderID: "pair"})
	if err != nil || pr.TPOrderID != pr.SLOrderID {
		t.Fatalf("pair: %+v %v", pr, err)
	}
	if _, err := f.sim.Engine().SetMarkPrice("BTC-USDT-SWAP", sl.Sub(d("100"))); err != nil {
		t.Fatal(err)
	}
	orders, _ := f.a.GetOrders(ctx, f.cred, &m)
	pos, _ := f.a.GetPositions(ctx, f.cred, &m)
	if len(orders.Orders) != 0 || len(pos.Positions) != 0 {
		t.Errorf("after the stop fired: orders %+v positions %+v", orders.Orders, pos.Positions)
	}
	fo, found, _ := f.a.FindOrder(ctx, f.cred, m, "pair-tp")
	if !found || fo.Status != contract.StatusFilled {
		t.Errorf("the pair after firing: %+v %v", fo, found)
	}
	single, err := f.a.PlaceProtectionOrders(ctx, f.cred, connector.ProtectionRequest{Market: m, PositionSide: contract.Long, Size: d("0.02"),
		StopLoss: &sl, ClientOrderID: "single"})
	if ce, _ := contract.AsError(err); err == nil || ce.ExchangeCode != "51169" {
		t.Errorf("a stop-loss without a position: %+v %v", single, err)
	}

	// Closed by other means, the position takes its protection with it.
	if _, err := f.a.PlaceMarketOrder(ctx, f.cred, marketOrder(m, contract.Buy, "0.02", false, "open-2")); err != nil {
		t.Fatal(err)
	}
	mark, _ = f.a.GetMarkPrice(ctx, f.cred, m)
	tp, sl = mark.MarkPrice.Add(d("10000")), mark.MarkPrice.Sub(d("10000"))
	if _, err := f.a.PlaceProtectionOrders(ctx, f.cred, connector.ProtectionRequest{Market: m, PositionSide: contract.Long, Size: d("0.02"),
		TakeProfit: &tp, StopLoss: &sl, ClientOrderID: "pair-2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.PlaceProtectionOrders(ctx, f.cred, connector.ProtectionRequest{Market: m, PositionSide: contract.Long, Size: d("0.02"),
		StopLoss: &sl, ClientOrderID: "single-2"}); err != nil {
		t.Fatal(err)
	}
	if orders, _ := f.a.GetOrders(ctx, f.cred, &m); len(orders.Orders) != 2 {
		t.Fatalf("want the oco and the conditional order pending, got %+v", orders.Orders)
	}
	if _, err := f.a.CloseAllPositions(ctx, f.cred, m); err != nil {
		t.Fatal(err)
	}
	if orders, _ := f.a.GetOrders(ctx, f.cred, &m); len(orders.Orders) != 0 {
		t.Errorf("protection survived its position: %+v", orders.Orders)
	}
}

// TestMarketOrderNoFill: OKX cancels a market order it could not fill; the
// adapter reports the cancellation instead of a zero fill.
func TestMarketOrderNoFill(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	m := f.market(t, "BTC-USDT-SWAP")
	f.sim.RewriteNext(http.MethodGet, "/api/v5/trade/order", func(data []byte) []byte {
		s := strings.Replace(string(data), `"state":"filled"`, `"state":"canceled"`, 1)
		return []byte(strings.Replace(s, `"accFillSz":"2"`, `"accFillSz":"0"`, 1))
	})
	_, err := f.a.PlaceMarketOrder(context.Background(), f.cred, marketOrder(m, contract.Buy, "0.02", false, "nofill"))
	if ce := testenv.WantUpstream(t, err, contract.ReasonInvalidOrder); !strings.Contains(ce.Message, "without a fill") {
		t.Errorf("error %+v", ce)
	}
}

// TestCandlesPaginate: 500 hourly candles take two calls of at most 300,
// come back oldest first, one per hour without gaps or repeats.
func TestCandlesPaginate(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	m := f.market(t, "BTC-USDT-SWAP")
	res, err := f.a.GetCandles(context.Background(), f.cred, m, 60, 500)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.sim.Hits(http.MethodGet, "/api/v5/market/candles"); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
	if len(res.Candles) != 500 {
		t.Fatalf("%d candles", len(res.Candles))
	}
	for i := 1; i < len(res.Candles); i++ {
		if res.Candles[i].Time-res.Candles[i-1].Time != 3600 {
			t.Fatalf("candle %d at %d after %d", i, res.Candles[i].Time, res.Candles[i-1].Time)
		}
	}
}

// TestPendingPages: 105 pending orders take two pages of the pending list
// (100 + 5, the second after the last ordId), and all are cancelled.
func TestPendingPages(t *testing.T) {
	f := newFixture(t, sim.Config{}, nil)
	ctx := context.Background()
	m := f.market(t, "BTC-USDT-SWAP")
	low := d(above(t, f, m, "0.8"))
	var orders []connector.OrderRequest
	for i := range 105 {
		orders = append(orders, limitOrder(m, contract.Buy, "0.0001", low.Sub(decimal.NewFromInt(int64(i))).String(), false, "p"+strconv.Itoa(i)))
	}
	if _, err := f.a.PlaceBatchOrder(ctx, f.cred, orders); err != nil {
		t.Fatal(err)
	}
	before := f.sim.Hits(http.MethodGet, "/api/v5/trade/orders-pending")
	open, err := f.a.GetOrders(ctx, f.cred, &m)
	if err != nil || len(open.Orders) != 105 {
		t.Fatalf("%d orders, %v", len(open.Orders), err)
	}
	seen := map[string]bool{}
	for _, o := range open.Orders {
		seen[o.ID] = true
	}
	if len(seen) != 105 || f.sim.Hits(http.MethodGet, "/api/v5/trade/orders-pending")-before != 2 {
		t.Errorf("%d distinct orders in %d pages", len(seen), f.sim.Hits(http.MethodGet, "/api/v5/trade/orders-pending")-before)
	}
	if n, err := f.a.CancelAllOrders(ctx, f.cred, m); err != nil || n != 105 {
		t.Errorf("cancel all: %d %v", n, err)
	}
}
