package venue_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
	"github.com/shopspring/decimal"
)

const btc = "BTC-USD-PERP"

var start = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func eq(t *testing.T, what string, got, want decimal.Decimal) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

// newClient serves a fresh engine on a frozen clock and returns its client.
func newClient(t *testing.T) (*venue.Client, *paper.Engine) {
	t.Helper()
	e := paper.New(paper.Config{Seed: 1, Now: func() time.Time { return start }})
	srv := httptest.NewServer(venue.NewHandler(e))
	t.Cleanup(srv.Close)
	return venue.NewClient(srv.URL, srv.Client()), e
}

func TestMarketData(t *testing.T) {
	c, _ := newClient(t)
	ctx := context.Background()

	ms, err := c.Markets(ctx)
	if err != nil || len(ms) != 3 || ms[0].Symbol != btc {
		t.Fatalf("markets = %+v, %v", ms, err)
	}
	eq(t, "tick", ms[0].TickSize, d("0.1"))
	if ms[0].NextFundingTime != start.Add(8*time.Hour).Unix() {
		t.Errorf("next funding = %d", ms[0].NextFundingTime)
	}
	m, err := c.Market(ctx, "eth-usd-perp")
	if err != nil || m.Symbol != "ETH-USD-PERP" {
		t.Fatalf("market = %+v, %v", m, err)
	}

	mp, err := c.SetMarkPrice(ctx, btc, d("60000"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "set mark", mp.MarkPrice, d("60000"))
	mp, _ = c.MarkPrice(ctx, btc)
	eq(t, "mark", mp.MarkPrice, d("60000"))
	if mp.Time != start.Unix() {
		t.Errorf("mark time = %d", mp.Time)
	}

	book, err := c.Orderbook(ctx, btc, 5)
	if err != nil || len(book.Bids) != 5 || len(book.Asks) != 5 {
		t.Fatalf("book = %+v, %v", book, err)
	}
	eq(t, "best bid", book.Bids[0][0], d("59999.9"))
	eq(t, "best ask", book.Asks[0][0], d("60000.1"))
	if book, _ := c.Orderbook(ctx, btc, 0); len(book.Bids) != 20 {
		t.Errorf("default depth = %d", len(book.Bids))
	}

	cs, err := c.Candles(ctx, btc, 15, 10)
	if err != nil || len(cs) != 10 || cs[9].Time%(15*60) != 0 {
		t.Fatalf("candles = %+v, %v", cs, err)
	}
	if cs, _ := c.Candles(ctx, btc, 0, 0); len(cs) != 100 || cs[1].Time-cs[0].Time != 3600 {
		t.Errorf("default candles: %d, want 100 hourly", len(cs))
	}

	f, err := c.Funding(ctx, btc)
	if err != nil || f.NextFundingTime != start.Add(8*time.Hour).Unix() || f.IntervalSeconds != 28800 || f.FundingRate.Sign() <= 0 {
		t.Fatalf("funding = %+v, %v", f, err)
	}
	fees, err := c.Fees(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "maker", fees.MakerFeeBps, d("2"))
	eq(t, "taker", fees.TakerFeeBps, d("5"))
}

func TestTradingFlow(t *testing.T) {
	c, _ := newClient(t)
	ctx := context.Background()
	const acct = "5b0c7f1e-1111-4e2b-9a55-000000000001"

	b, err := c.EnsureAccount(ctx, acct, d("20000"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "starting", b.Wallet, d("20000"))
	if lev, err := c.SetLeverage(ctx, acct, btc, 20); err != nil || lev != 20 {
		t.Fatalf("set leverage = %d, %v", lev, err)
	}
	if lev, _ := c.Leverage(ctx, acct, btc); lev != 20 {
		t.Fatalf("leverage = %d", lev)
	}
	c.SetMarkPrice(ctx, btc, d("59999.9"))

	// Taker buy of 1 BTC at exactly 60000: fee 30.
	o, err := c.PlaceOrder(ctx, acct, venue.OrderRequest{Market: btc, Side: "BUY", Type: "LIMIT", Size: d("1"), Price: d("60000"), ClientOrderID: "cid-1"})
	if err != nil || o.Status != "FILLED" || o.ClientOrderID != "cid-1" {
		t.Fatalf("buy = %+v, %v", o, err)
	}
	eq(t, "fee", o.Fee, d("30"))

	rest, err := c.PlaceOrder(ctx, acct, venue.OrderRequest{Market: btc, Side: "SELL", Type: "LIMIT", Size: d("0.5"), Price: d("61000"), PostOnly: true})
	if err != nil || rest.Status != "OPEN" || rest.CreatedAt != start.Unix() {
		t.Fatalf("rest = %+v, %v", rest, err)
	}
	stop, err := c.PlaceOrder(ctx, acct, venue.OrderRequest{Market: btc, Side: "SELL", Type: "STOP_MARKET", Size: d("1"), TriggerPrice: d("59000"), ReduceOnly: true})
	if err != nil || stop.Status != "PENDING" {
		t.Fatalf("stop = %+v, %v", stop, err)
	}
	open, err := c.Orders(ctx, acct, btc)
	if err != nil || len(open) != 2 {
		t.Fatalf("orders = %+v, %v", open, err)
	}
	if byCID, err := c.OrderByClientID(ctx, acct, "cid-1"); err != nil || byCID.ID != o.ID {
		t.Fatalf("by client id = %+v, %v", byCID, err)
	}

	c.SetMarkPrice(ctx, btc, d("61000"))
	got, err := c.Order(ctx, acct, rest.ID)
	if err != nil || got.Status != "FILLED" {
		t.Fatalf("rested order = %+v, %v", got, err)
	}
	pos, err := c.Positions(ctx, acct, "")
	if err != nil || len(pos) != 1 || pos[0].Side != "LONG" || pos[0].Leverage != 20 {
		t.Fatalf("positions = %+v, %v", pos, err)
	}
	eq(t, "size", pos[0].Size, d("0.5"))
	eq(t, "entry", pos[0].EntryPrice, d("60000"))

	fills, err := c.Fills(ctx, acct, btc, 0)
	if err != nil || len(fills) != 2 || fills[0].Liquidity != "MAKER" || fills[0].Timestamp != start.Unix() {
		t.Fatalf("fills = %+v, %v", fills, err)
	}
	eq(t, "maker fee", fills[0].Fee, d("6.1"))
	eq(t, "realized", fills[0].RealizedPnl, d("500"))
	b, _ = c.Balance(ctx, acct)
	eq(t, "wallet", b.Wallet, d("20000").Sub(d("30")).Add(d("500")).Sub(d("6.1")))

	closed, err := c.ClosePosition(ctx, acct, btc)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "closed", closed.ClosedSize, d("0.5"))
	eq(t, "avg close", closed.AvgClosePrice, d("60999.9"))

	// The reduce-only stop has nothing left to reduce.
	if got, _ := c.Order(ctx, acct, stop.ID); got.Status != "PENDING" {
		t.Fatalf("stop = %+v", got)
	}
	if n, err := c.CancelAll(ctx, acct, btc); err != nil || n != 1 {
		t.Fatalf("cancel all = %d, %v", n, err)
	}
	o2, _ := c.PlaceOrder(ctx, acct, venue.OrderRequest{Market: btc, Side: "BUY", Type: "LIMIT", Size: d("0.01"), Price: d("50000")})
	if got, err := c.CancelOrder(ctx, acct, o2.ID); err != nil || got.Status != "CANCELLED" {
		t.Fatalf("cancel = %+v, %v", got, err)
	}
	if n, _ := c.CancelAll(ctx, acct, ""); n != 0 {
		t.Fatalf("cancel all again = %d", n)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		call   func(c *venue.Client) error
		kind   string
		status int
		msg    string
	}{
		{name: "post-only crosses", call: func(c *venue.Client) error {
			_, err := c.PlaceOrder(ctx, "a", venue.OrderRequest{Market: btc, Side: "BUY", Type: "LIMIT", Size: d("0.01"), Price: d("61000"), PostOnly: true})
			return err
		}, kind: venue.KindPostOnlyRejected, status: 422, msg: "best opposite price is 60000.1"},
		{name: "insufficient margin", call: func(c *venue.Client) error {
			_, err := c.PlaceOrder(ctx, "a", venue.OrderRequest{Market: btc, Side: "BUY", Type: "MARKET", Size: d("5")})
			return err
		}, kind: venue.KindInsufficientMargin, status: 422, msg: "free collateral is 10000"},
		{name: "reduce-only flat", call: func(c *venue.Client) error {
			_, err := c.PlaceOrder(ctx, "a", venue.OrderRequest{Market: btc, Side: "SELL", Type: "MARKET", Size: d("1"), ReduceOnly: true})
			return err
		}, kind: venue.KindReduceOnly, status: 422, msg: "no LONG position to reduce"},
		{name: "cancel unknown", call: func(c *venue.Client) error { _, err := c.CancelOrder(ctx, "a", "123"); return err },
			kind: venue.KindOrderNotFound, status: 404, msg: "order 123"},
		{name: "order by unknown client id", call: func(c *venue.Client) error { _, err := c.OrderByClientID(ctx, "a", "zz"); return err },
			kind: venue.KindOrderNotFound, status: 404, msg: "zz"},
		{name: "unknown market", call: func(c *venue.Client) error { _, err := c.MarkPrice(ctx, "DOGE"); return err },
			kind: venue.KindUnknownMarket, status: 404, msg: `"DOGE"`},
		{name: "invalid size", call: func(c *venue.Client) error {
			_, err := c.PlaceOrder(ctx, "a", venue.OrderRequest{Market: btc, Side: "BUY", Type: "LIMIT", Size: d("0.0001"), Price: d("60000")})
			return err
		}, kind: venue.KindInvalidOrder, status: 400, msg: "lot size 0.001"},
		{name: "invalid leverage", call: func(c *venue.Client) error { _, err := c.SetLeverage(ctx, "a", btc, 100); return err },
			kind: venue.KindInvalidOrder, status: 400, msg: "must be 1 to 50"},
		{name: "bad depth", call: func(c *venue.Client) error { _, err := c.Orderbook(ctx, btc, 1000); return err },
			kind: venue.KindBadRequest, status: 400, msg: "at most 500"},
		{name: "bad candle interval", call: func(c *venue.Client) error { _, err := c.Candles(ctx, btc, -5, 10); return err },
			kind: venue.KindBadRequest, status: 400, msg: "interval"},
		{name: "negative starting balance", call: func(c *venue.Client) error { _, err := c.EnsureAccount(ctx, "x", d("-5")); return err },
			kind: venue.KindBadRequest, status: 400, msg: "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newClient(t)
			c.SetMarkPrice(ctx, btc, d("60000"))
			err := tt.call(c)
			var ve *venue.Error
			if !errors.As(err, &ve) {
				t.Fatalf("got %v, want *venue.Error", err)
			}
			if ve.Kind != tt.kind || ve.Status != tt.status || !strings.Contains(ve.Message, tt.msg) {
				t.Fatalf("got %s %d %q, want %s %d containing %q", ve.Kind, ve.Status, ve.Message, tt.kind, tt.status, tt.msg)
			}
		})
	}
}

func TestRawRequests(t *testing.T) {
	_, e := newClient(t)
	srv := httptest.NewServer(venue.NewHandler(e))
	defer srv.Close()
	tests := []struct {
		name, method, path, body string
		status                   int
		kind                     string
	}{
		{name: "unknown field", method: "POST", path: "/v1/accounts/a/orders", body: `{"market":"BTC-USD-PERP","sidee":"BUY"}`, status: 400, kind: venue.KindBadRequest},
		{name: "not json", method: "POST", path: "/v1/accounts/a/orders", body: `nope`, status: 400, kind: venue.KindBadRequest},
		{name: "empty body", method: "PUT", path: "/v1/accounts/a/leverage/BTC-USD-PERP", body: ``, status: 400, kind: venue.KindBadRequest},
		{name: "bad limit", method: "GET", path: "/v1/accounts/a/fills?limit=x", status: 400, kind: venue.KindBadRequest},
		{name: "no route", method: "GET", path: "/v2/nothing", status: 404, kind: venue.KindNotFound},
		{name: "decimals as strings", method: "GET", path: "/v1/fees", status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			buf := new(strings.Builder)
			_, _ = io.Copy(buf, resp.Body)
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d %q, body %s", resp.StatusCode, resp.Header.Get("Content-Type"), buf)
			}
			if tt.kind != "" && !strings.Contains(buf.String(), `"kind":"`+tt.kind+`"`) {
				t.Fatalf("body %s, want kind %s", buf, tt.kind)
			}
			if tt.status == 200 && buf.String() != `{"makerFeeBps":"2","takerFeeBps":"5"}`+"\n" {
				t.Fatalf("body %s", buf)
			}
		})
	}
}

func TestRun(t *testing.T) {
	v, err := venue.New(venue.Config{Addr: "127.0.0.1:0", ShutdownTimeout: time.Second}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Open(); err != nil {
		t.Fatal(err)
	}
	c := venue.NewClient(v.URL(), nil)
	if _, err := c.Markets(context.Background()); err != nil {
		t.Fatalf("markets via open venue: %v", err)
	}
	// The stream upgrades through the venue's own server and its request
	// log, as connector-paper dials it in a deployment.
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	sc, err := c.DialStream(sctx)
	if err != nil {
		t.Fatalf("stream via open venue: %v", err)
	}
	if err := sc.Subscribe(sctx, []string{"BTC-USD-PERP"}); err != nil {
		t.Fatal(err)
	}
	if f, err := sc.Next(sctx); err != nil {
		t.Fatalf("first stream frame: %v", err)
	} else {
		t.Logf("first frame: %s mark %s", f.Market, f.MarkPrice)
	}
	sc.Close()

	// A taken port fails Run at once.
	taken, err := venue.New(venue.Config{Addr: v.Addr(), ShutdownTimeout: time.Second}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- taken.Run(context.Background()) }()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "listen") {
			t.Fatalf("run on a taken port = %v, want a listen error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run on a taken port did not fail")
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}

	// Run serves until its context is cancelled.
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	r, _ := venue.New(venue.Config{Addr: addr, ShutdownTimeout: time.Second}, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { errc <- r.Run(ctx) }()
	rc := venue.NewClient("http://"+addr, nil)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := rc.Fees(context.Background()); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("venue did not come up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run after cancel = %v", err)
	}
	if _, err := rc.Fees(context.Background()); err == nil {
		t.Fatal("venue still serving after shutdown")
	}
}

func TestConfigValidate(t *testing.T) {
	err := venue.Config{}.Validate()
	if err == nil || !strings.Contains(err.Error(), "listen address") || !strings.Contains(err.Error(), "shutdown timeout") {
		t.Fatalf("validate = %v, want both problems", err)
	}
	if err := venue.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}
