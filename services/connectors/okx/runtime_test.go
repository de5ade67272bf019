package okx

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/okx/sim"
)

// busFixture serves the adapter on an embedded NATS through the shared
// runtime, with a stand-in keys service that hands out one credential.
type busFixture struct {
	*fixture
	nc *nats.Conn
	s  contract.Subjects
}

func newBusFixture(t *testing.T) *busFixture {
	t.Helper()
	return newBusFixtureWrapped(t, nil)
}

func newBusFixtureWrapped(t *testing.T, wrap func(http.Handler) http.Handler) *busFixture {
	t.Helper()
	f := newFixtureWrapped(t, sim.Config{}, nil, wrap)
	ns := testenv.EmbeddedNATS(t)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	subjects := contract.NewSubjects("")
	info := contract.CredentialInfo{ID: "cred-1", AccountID: "acct-1", Exchange: contract.OKX, Environment: contract.Mainnet}
	sub, err := nc.Subscribe(subjects.Secret(contract.OKX), func(m *nats.Msg) {
		b, _ := json.Marshal(contract.SecretResponse{Credential: info, Secret: f.cred.Secret})
		_ = m.Respond(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	rt := connector.New(connector.Config{Subjects: subjects}, f.a, nc, connector.NewMemoryIdempotency(time.Now), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop() })
	return &busFixture{fixture: f, nc: nc, s: subjects}
}

// call sends one operation as the edge does and decodes the answer.
func (b *busFixture) call(t *testing.T, op string, params any, out any) error {
	t.Helper()
	o, ok := contract.Lookup(op)
	if !ok {
		t.Fatalf("no operation %s", op)
	}
	raw, _ := json.Marshal(params)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := contract.ConnectorRequest{RequestID: "r-" + op, Operation: op, AccountID: "acct-1",
		Credential: contract.CredentialInfo{ID: "cred-1", AccountID: "acct-1", Exchange: contract.OKX, Environment: contract.Mainnet}, Params: raw}
	return bus.RequestConnector(ctx, b.nc, b.s.Operation(contract.OKX, o), req, out)
}

// TestOverNATS runs the 20 operations from the bus with the canonical
// market BTC-USDT-PERP and sizes in BTC: the runtime resolves the market
// and rounds, the adapter converts to contracts, the answers come back in
// base units and canonical names; a repeated clientOrderId places nothing.
func TestOverNATS(t *testing.T) {
	b := newBusFixture(t)
	const mkt = "BTC-USDT-PERP"
	type M = map[string]any
	var mark contract.MarkPriceResult
	steps := []struct {
		op     string
		params M
		out    any
	}{
		{"getOrderbook", M{"market": mkt, "depth": 5}, &contract.OrderbookResult{}},
		{"getMarkPrice", M{"market": mkt}, &mark},
		{"getCandles", M{"market": mkt, "interval": "1440", "limit": 3}, &contract.CandlesResult{}},
		{"getFundingRate", M{"market": mkt}, &contract.FundingRateResult{}},
		{"getMarketsWithFunding", M{}, &contract.MarketsResult{}},
		{"getFeeInfo", M{"market": mkt}, &contract.FeeInfoResult{}},
		{"getBalance", M{}, &contract.BalanceResult{}},
		{"testCredentials", M{}, &contract.TestCredentialsResult{}},
		{"setLeverage", M{"market": mkt, "leverage": 5}, &contract.LeverageResult{}},
	}
	for _, s := range steps {
		if err := b.call(t, s.op, s.params, s.out); err != nil {
			t.Fatalf("%s: %v", s.op, err)
		}
	}
	var mo contract.MarketOrderResult
	// 0.01239 BTC floors to 1.23 contracts of 0.01: 0.0123 BTC.
	if err := b.call(t, "placeMarketOrder", M{"market": "btc", "side": "BUY", "size": "0.01239", "clientOrderId": "nats-m1"}, &mo); err != nil {
		t.Fatal(err)
	}
	if mo.Market != mkt || !mo.FilledSize.Equal(d("0.0123")) || !mo.Fee.IsPositive() {
		t.Errorf("market order %+v", mo)
	}
	var again contract.MarketOrderResult
	if err := b.call(t, "placeMarketOrder", M{"market": "btc", "side": "BUY", "size": "0.01239", "clientOrderId": "nats-m1"}, &again); err != nil ||
		again.OrderID != mo.OrderID {
		t.Errorf("repeat: %+v %v", again, err)
	}
	if n := b.sim.Hits("POST", "/api/v5/trade/order"); n != 1 {
		t.Errorf("%d placements, want 1 (the repeat answered from the first)", n)
	}
	var pos contract.PositionsResult
	if err := b.call(t, "getPositions", M{"market": mkt}, &pos); err != nil || len(pos.Positions) != 1 ||
		pos.Positions[0].Market != mkt || !pos.Positions[0].Size.Equal(d("0.0123")) {
		t.Fatalf("positions %+v %v", pos, err)
	}
	low := mark.MarkPrice.Mul(d("0.9")).Round(0).String()
	var lo contract.LimitOrderResult
	if err := b.call(t, "placeLimitOrder", M{"market": mkt, "side": "BUY", "size": "0.001", "price": low, "postOnly": true}, &lo); err != nil ||
		lo.Status != contract.StatusOpen || lo.ClientOrderID == "" {
		t.Fatalf("limit %+v %v", lo, err)
	}
	high := mark.MarkPrice.Mul(d("1.1")).Round(0).String()
	err := b.call(t, "placeLimitOrder", M{"market": mkt, "side": "BUY", "size": "0.001", "price": high, "postOnly": true}, &contract.LimitOrderResult{})
	if ce, ok := contract.AsError(err); !ok || ce.Reason != contract.ReasonPostOnlyRejected {
		t.Errorf("post-only taker over the bus: %v", err)
	}
	var st contract.StopOrderResult
	if err := b.call(t, "placeStopOrder", M{"market": mkt, "side": "SELL", "size": "0.001", "triggerPrice": mark.MarkPrice.Mul(d("0.5")).Round(0).String()}, &st); err != nil {
		t.Fatal(err)
	}
	var batch contract.BatchResult
	if err := b.call(t, "placeBatchOrder", M{"orders": []M{{"market": mkt, "side": "BUY", "size": "0.001", "price": low},
		{"market": mkt, "side": "SELL", "size": "0.001", "price": low, "reduceOnly": true, "postOnly": true}}}, &batch); err != nil ||
		len(batch.Results) != 2 || batch.Results[0].Status != contract.StatusOpen || batch.Results[1].Status != contract.StatusRejected {
		t.Fatalf("batch %+v %v", batch, err)
	}
	var pr contract.ProtectionResult
	if err := b.call(t, "placeProtectionOrders", M{"market": mkt, "side": "LONG", "size": "0.0123", "entryPrice": mark.MarkPrice.String(),
		"tpPercent": 20, "slPercent": 20}, &pr); err != nil || pr.TPOrderID == "" || pr.TPOrderID != pr.SLOrderID {
		t.Fatalf("protection %+v %v", pr, err)
	}
	var orders contract.OrdersResult
	if err := b.call(t, "getOrders", M{"market": mkt}, &orders); err != nil || len(orders.Orders) != 4 {
		t.Fatalf("orders %d %+v %v", len(orders.Orders), orders, err)
	}
	if err := b.call(t, "cancelOrder", M{"orderId": lo.OrderID, "market": mkt}, &contract.CancelOrderResult{}); err != nil {
		t.Fatal(err)
	}
	var ca contract.CancelAllResult
	if err := b.call(t, "cancelAllOrders", M{"market": mkt}, &ca); err != nil || ca.CancelledCount != 3 {
		t.Fatalf("cancel all %+v %v", ca, err)
	}
	var fills contract.FillsResult
	if err := b.call(t, "getFills", M{"market": mkt, "limit": 5}, &fills); err != nil || len(fills.Fills) == 0 || fills.Fills[0].Market != mkt {
		t.Fatalf("fills %+v %v", fills, err)
	}
	var closed contract.CloseAllResult
	if err := b.call(t, "closeAllPositions", M{"market": mkt}, &closed); err != nil || !closed.ClosedSize.Equal(d("0.0123")) {
		t.Fatalf("close %+v %v", closed, err)
	}
}

// TestLostAnswerReconciled: OKX places the order but its answer is lost
// (HTTP 502 from a proxy). The runtime looks the order up by its
// clientOrderId (a gateway UUID, sent as the dashless clOrdId) and answers
// the order OKX has; a repeat places nothing.
func TestLostAnswerReconciled(t *testing.T) {
	var lost atomic.Int32
	b := newBusFixtureWrapped(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Path == "/api/v5/trade/order" && lost.Add(1) == 1 {
				next.ServeHTTP(httptest.NewRecorder(), r) // placed; the answer never arrives
				http.Error(w, "bad gateway", http.StatusBadGateway)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	const id = "6f1c0a52-3b7e-4d2a-9c4f-0e8b7a6d5c41"
	var mo contract.MarketOrderResult
	if err := b.call(t, "placeMarketOrder", map[string]any{"market": "BTC-USDT-PERP", "side": "BUY", "size": "0.01", "clientOrderId": id}, &mo); err != nil {
		t.Fatalf("placement with a lost answer: %v", err)
	}
	if mo.OrderID == "" || !mo.FilledSize.Equal(d("0.01")) || mo.ClientOrderID != id {
		t.Errorf("reconciled answer %+v", mo)
	}
	var again contract.MarketOrderResult
	if err := b.call(t, "placeMarketOrder", map[string]any{"market": "BTC-USDT-PERP", "side": "BUY", "size": "0.01", "clientOrderId": id}, &again); err != nil ||
		again.OrderID != mo.OrderID {
		t.Errorf("repeat %+v %v", again, err)
	}
	if n := b.sim.Hits(http.MethodPost, "/api/v5/trade/order"); n != 1 {
		t.Errorf("%d placements reached OKX, want 1", n)
	}
	pos, _ := b.a.GetPositions(context.Background(), b.cred, nil)
	if len(pos.Positions) != 1 || !pos.Positions[0].Size.Equal(d("0.01")) {
		t.Errorf("positions %+v, want one of 0.01 BTC", pos.Positions)
	}
}

// TestHeaderFormServed: an edge that predates the framed body sends the
// envelope in NATS header fields; the runtime answers it as it answers a
// framed request.
func TestHeaderFormServed(t *testing.T) {
	b := newBusFixture(t)
	var framed contract.BalanceResult
	if err := b.call(t, "getBalance", map[string]any{}, &framed); err != nil {
		t.Fatal(err)
	}
	o, _ := contract.Lookup(contract.OpGetBalance)
	req := contract.ConnectorRequest{RequestID: "r-old-edge", Operation: o.Name, AccountID: "acct-1",
		Credential: contract.CredentialInfo{ID: "cred-1"}}
	h, err := req.Header()
	if err != nil {
		t.Fatal(err)
	}
	h[contract.HeaderDeadline] = []string{time.Now().Add(10 * time.Second).UTC().Format(time.RFC3339Nano)}
	reply, err := b.nc.RequestMsg(&nats.Msg{Subject: b.s.Operation(contract.OKX, o), Header: h, Data: []byte(`{}`)}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.ReplyError(reply); err != nil {
		t.Fatalf("header-form request refused: %v", err)
	}
	var got contract.BalanceResult
	if err := json.Unmarshal(reply.Data, &got); err != nil {
		t.Fatal(err)
	}
	if !got.Equity.Equal(framed.Equity) || got.Equity.IsZero() || got.ExchangeType != contract.OKX {
		t.Fatalf("header form answered %+v, framed %+v", got, framed)
	}
}
