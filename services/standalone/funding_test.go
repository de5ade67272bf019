package standalone

import (
	"testing"

	binancesim "github.com/perpgate/perpgate/services/connectors/binance/sim"
	bybitsim "github.com/perpgate/perpgate/services/connectors/bybit/sim"
	okxsim "github.com/perpgate/perpgate/services/connectors/okx/sim"
	paradexsim "github.com/perpgate/perpgate/services/connectors/paradex/sim"
	"github.com/shopspring/decimal"
)

// TestFundingIntervals: getFundingRate and every getMarketsWithFunding
// entry carry fundingIntervalHours and fundingRateHourly (the rate spread
// over its interval) on every venue: 8 hours on paper, Bybit and OKX, the
// interval Binance lists for an adjusted symbol (4 for 1000PEPEUSDT here,
// 8 for the rest), 1 on Hyperliquid, Paradex's funding period (8).
func TestFundingIntervals(t *testing.T) {
	g := startGateway(t)
	b := startBinance(t, binancesim.Config{FundingHours: map[string]int{"1000PEPEUSDT": 4}})
	y := startBybit(t, bybitsim.Config{}, nil)
	o := startOKX(t, okxsim.Config{}, nil)
	h := startHyperliquid(t)
	p := startParadex(t, paradexsim.Config{}, nil)
	for _, v := range []struct {
		name    string
		do      func(map[string]any) map[string]any
		market  string
		hours   float64
		entries map[string]float64 // canonical symbol → hours, for some entries
	}{
		{"paper", g.ok, "BTC", 8, map[string]float64{"BTC-USD-PERP": 8}},
		{"binance", b.ok, "1000PEPE", 4, map[string]float64{"BTC-USDT-PERP": 8, "1000PEPE-USDT-PERP": 4}},
		{"bybit", y.ok, "BTC", 8, map[string]float64{"BTC-USDT-PERP": 8}},
		{"okx", o.ok, "BTC", 8, map[string]float64{"BTC-USDT-PERP": 8}},
		{"hyperliquid", h.do, "BTC", 1, map[string]float64{"BTC-USD-PERP": 1}},
		{"paradex", p.ok, "BTC", 8, map[string]float64{"BTC-USD-PERP": 8}},
	} {
		t.Run(v.name, func(t *testing.T) {
			check := func(where string, m map[string]any, hours float64) {
				t.Helper()
				requireFields(t, where, m, map[string]kind{"fundingRate": decStr, "fundingRateHourly": decStr})
				if m["fundingIntervalHours"] != hours {
					t.Errorf("%s: fundingIntervalHours %v, want %v", where, m["fundingIntervalHours"], hours)
				}
				rate, hourly := dec(t, m["fundingRate"]), dec(t, m["fundingRateHourly"])
				if want := rate.DivRound(decimal.NewFromFloat(hours), 12); !hourly.Equal(want) {
					t.Errorf("%s: fundingRateHourly %s, want %s / %v = %s", where, hourly, rate, hours, want)
				}
			}
			// Twice: the second read may come from the stream view, whose
			// frames carry no interval; the one the first read learned stands.
			for range 2 {
				check("getFundingRate", v.do(map[string]any{"operation": "getFundingRate", "market": v.market}), v.hours)
			}
			seen := 0
			v.do(map[string]any{"operation": "getMarketsWithFunding"})
			for _, e := range objects(t, v.do(map[string]any{"operation": "getMarketsWithFunding"})["markets"]) {
				if hours, ok := v.entries[e["symbol"].(string)]; ok {
					check(e["symbol"].(string), e, hours)
					seen++
				}
			}
			if seen != len(v.entries) {
				t.Errorf("getMarketsWithFunding lacks some of %v", v.entries)
			}
		})
	}
}
