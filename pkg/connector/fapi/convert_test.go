package fapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

func itoa(n int64) string { return decimal.NewFromInt(n).String() }

func TestStatus(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"new rests", "NEW", contract.StatusOpen},
		{"partly filled still rests", "PARTIALLY_FILLED", contract.StatusOpen},
		{"filled", "FILLED", contract.StatusFilled},
		{"cancelled", "CANCELED", contract.StatusCancelled},
		{"expired unfilled is refused", "EXPIRED", contract.StatusRejected},
		{"expired by self-trade prevention unfilled", "EXPIRED_IN_MATCH", contract.StatusRejected},
		{"rejected", "REJECTED", contract.StatusRejected},
		{"unknown unfilled is refused", "NEW_INSURANCE", contract.StatusRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Status(tt.in, false); got != tt.want {
				t.Errorf("Status(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
	if got := Status("EXPIRED", true); got != contract.StatusCancelled {
		t.Errorf("an IOC expired after a partial fill: %s, want CANCELLED", got)
	}
}

func TestDepthLimit(t *testing.T) {
	tests := []struct{ depth, limit, weight int }{
		{1, 5, 2}, {5, 5, 2}, {7, 10, 2}, {20, 20, 2}, {21, 50, 2}, {100, 100, 5}, {101, 500, 10}, {500, 500, 10}, {501, 1000, 20},
	}
	for _, tt := range tests {
		t.Run(itoa(int64(tt.depth)), func(t *testing.T) {
			if l := DepthLimit(tt.depth); l != tt.limit || DepthWeight(l) != tt.weight {
				t.Errorf("depth %d: limit %d weight %d, want %d %d", tt.depth, l, DepthWeight(l), tt.limit, tt.weight)
			}
		})
	}
}

func TestCandle(t *testing.T) {
	tests := []struct {
		name string
		row  string
		ok   bool
		want string
	}{
		{"full row", `[1735689600000,"95000.1","95100","94900.5","95050.20","12.345",1735689659999,"1172000","100","1","95000","0"]`, true,
			"1735689600 95000.1 95100 94900.5 95050.2 12.345"},
		{"short row", `[1735689600000,"1","2","3"]`, false, ""},
		{"bad number", `[1735689600000,"x","2","3","4","5"]`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var k Kline
			if err := json.Unmarshal([]byte(tt.row), &k); err != nil {
				t.Fatal(err)
			}
			c, ok := Candle(k)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if ok {
				got := strings.Join([]string{itoa(c.Time), c.Open.String(), c.High.String(), c.Low.String(), c.Close.String(), c.Volume.String()}, " ")
				if got != tt.want {
					t.Errorf("got %s, want %s", got, tt.want)
				}
			}
		})
	}
}

func TestPosition(t *testing.T) {
	d := decimal.RequireFromString
	tests := []struct {
		name string
		in   PositionRisk
		side contract.PositionSide
		size string
	}{
		{"one-way long", PositionRisk{Symbol: "BTCUSDT", PositionSide: "BOTH", PositionAmt: d("0.25")}, contract.Long, "0.25"},
		{"one-way short", PositionRisk{Symbol: "BTCUSDT", PositionSide: "BOTH", PositionAmt: d("-0.25")}, contract.Short, "0.25"},
		{"hedge long leg", PositionRisk{Symbol: "BTCUSDT", PositionSide: "LONG", PositionAmt: d("1")}, contract.Long, "1"},
		{"hedge short leg", PositionRisk{Symbol: "BTCUSDT", PositionSide: "SHORT", PositionAmt: d("-1")}, contract.Short, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Position(tt.in, decimal.NewFromInt(7))
			if p.Side != tt.side || p.Size.String() != tt.size || p.Leverage.String() != "7" || p.Market != "BTCUSDT" {
				t.Errorf("got %+v", p)
			}
		})
	}
}

// TestMarkets: only USDT perpetuals that trade are listed, with
// their filters; multiplier listings keep the multiplier apart from the
// base.
func TestMarkets(t *testing.T) {
	filters := func(tick, step, notional string) []SymbolFilter {
		d := decimal.RequireFromString
		return []SymbolFilter{
			{FilterType: "PRICE_FILTER", TickSize: d(tick)},
			{FilterType: "LOT_SIZE", StepSize: d(step), MinQty: d(step), MaxQty: d("1000000")},
			{FilterType: "MARKET_LOT_SIZE", StepSize: d(step), MaxQty: d("120")},
			{FilterType: "MIN_NOTIONAL", Notional: d(notional)},
		}
	}
	perp := func(sym, quote, status string) SymbolInfo {
		return SymbolInfo{Symbol: sym, ContractType: "PERPETUAL", Status: status, QuoteAsset: quote, Filters: filters("0.1", "0.001", "100")}
	}
	info := ExchangeInfo{
		RateLimits: []RateLimit{{RateLimitType: "ORDERS", Interval: "MINUTE", IntervalNum: 1, Limit: 1200},
			{RateLimitType: "REQUEST_WEIGHT", Interval: "MINUTE", IntervalNum: 1, Limit: 6000}},
		Symbols: []SymbolInfo{
			perp("BTCUSDT", "USDT", "TRADING"),
			{Symbol: "1000PEPEUSDT", ContractType: "PERPETUAL", Status: "TRADING", QuoteAsset: "USDT", Filters: filters("0.0000001", "1", "5")},
			{Symbol: "1MBABYDOGEUSDT", ContractType: "PERPETUAL", Status: "TRADING", QuoteAsset: "USDT", Filters: filters("0.0000001", "1", "5")},
			{Symbol: "BTCUSDT_261225", ContractType: "CURRENT_QUARTER", Status: "TRADING", QuoteAsset: "USDT", Filters: filters("0.1", "0.001", "5")},
			perp("ETHUSDC", "USDC", "TRADING"),
			perp("XYZUSDT", "USDT", "SETTLING"),
			perp("NEWUSDT", "USDT", "PENDING_TRADING"),
			{Symbol: "NOFILTERUSDT", ContractType: "PERPETUAL", Status: "TRADING", QuoteAsset: "USDT"},
		},
	}
	list, meta := Markets(info, Quote)
	got := map[string]string{}
	for _, m := range list {
		got[m.Native] = strings.Join([]string{m.Canonical, m.Base, itoa(int64(m.Multiplier)), m.TickSize.String(), m.LotSize.String(),
			m.MinSize.String(), m.MinNotional.String(), meta[m.Native].MarketMaxQty.String()}, " ")
	}
	want := map[string]string{
		"BTCUSDT":        "BTC-USDT-PERP BTC 1 0.1 0.001 0.001 100 120",
		"1000PEPEUSDT":   "1000PEPE-USDT-PERP PEPE 1000 0.0000001 1 1 5 120",
		"1MBABYDOGEUSDT": "1000000BABYDOGE-USDT-PERP BABYDOGE 1000000 0.0000001 1 1 5 120",
	}
	if len(got) != len(want) {
		t.Errorf("listed %v, want only %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
	if n := WeightLimit(info); n != 6000 {
		t.Errorf("weight limit %d, want 6000", n)
	}
}

func TestFmtDecIsPlain(t *testing.T) {
	for _, in := range []string{"1e-7", "0.0000001", "1.2E+3", "95000.10"} {
		d := decimal.RequireFromString(in)
		if s := FmtDec(d); strings.ContainsAny(s, "eE") || !decimal.RequireFromString(s).Equal(d) {
			t.Errorf("FmtDec(%s) = %s", in, s)
		}
	}
}
