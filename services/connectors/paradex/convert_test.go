package paradex

import (
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/symbol"
	"github.com/shopspring/decimal"
)

func TestAggregateHourlyCandles(t *testing.T) {
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC).Unix()
	var hourly []contract.Candle
	// 50 hours from 22:00 the day before, shuffled order on purpose.
	for i := 49; i >= 0; i-- {
		ts := day - 2*3600 + int64(i)*3600
		p := d("100").Add(decimal.NewFromInt(int64(i)))
		hourly = append(hourly, contract.Candle{Time: ts, Open: p, High: p.Add(d("5")), Low: p.Sub(d("5")), Close: p.Add(d("1")), Volume: d("2")})
	}
	four := aggregate(append([]contract.Candle(nil), hourly...), 240, 100)
	// 22:00-24:00 partial, then 12 full 4h buckets over 48 h (last is 20:00-24:00 of day 2).
	if len(four) != 13 || four[0].Time != day-4*3600 || four[1].Time != day {
		t.Fatalf("240: %d candles, first %d, second %d", len(four), four[0].Time, four[1].Time)
	}
	c := four[1] // hours i=2..5
	if !c.Open.Equal(d("102")) || !c.Close.Equal(d("106")) || !c.High.Equal(d("110")) || !c.Low.Equal(d("97")) || !c.Volume.Equal(d("8")) {
		t.Errorf("first full 4h candle %+v", c)
	}
	days := aggregate(append([]contract.Candle(nil), hourly...), 1440, 2)
	if len(days) != 2 || days[0].Time != day || days[1].Time != day+86400 || !days[0].Volume.Equal(d("48")) ||
		!days[0].Open.Equal(d("102")) || !days[0].Close.Equal(d("126")) {
		t.Fatalf("1440: %+v", days)
	}
}

// TestMultipliersBothWays: Paradex's kPEPE and mSATS listings read as
// 1000 PEPE and a million SATS, and the canonical names clients use
// resolve back to them.
func TestMultipliersBothWays(t *testing.T) {
	for _, tt := range []struct {
		native, canonical, base string
		mult                    int
		aliases                 []string
	}{
		{"BTC-USD-PERP", "BTC-USD-PERP", "BTC", 1, []string{"BTC", "btc", "BTC-USD"}},
		{"kPEPE-USD-PERP", "1000PEPE-USD-PERP", "PEPE", 1000, []string{"1000PEPE", "kPEPE", "1000PEPE-USD-PERP", "kPEPE-USD-PERP"}},
		{"mSATS-USD-PERP", "1000000SATS-USD-PERP", "SATS", 1_000_000, []string{"1000000SATS", "1MSATS", "1000000SATS-USD-PERP"}},
	} {
		t.Run(tt.native, func(t *testing.T) {
			m, ok := marketFromWire(marketResp{Symbol: tt.native, AssetKind: "PERP", PriceTickSize: dv("0.1"), OrderSizeIncrement: dv("1")})
			if !ok || m.Canonical != tt.canonical || m.Base != tt.base || m.Multiplier != tt.mult || m.Native != tt.native {
				t.Fatalf("%s read as %+v", tt.native, m)
			}
			for _, a := range tt.aliases {
				s, err := symbol.Parse(a)
				if err != nil || s.Base != m.Base || max(s.Multiplier, 1) != m.Multiplier {
					t.Errorf("%q does not resolve to %s: %+v, %v", a, tt.native, s, err)
				}
			}
		})
	}
	if _, ok := marketFromWire(marketResp{Symbol: "BTC-USD-96000-C", AssetKind: "PERP_OPTION", PriceTickSize: dv("0.1"), OrderSizeIncrement: dv("1")}); ok {
		t.Error("an option is listed")
	}
}

func TestStatusFromWire(t *testing.T) {
	for _, tt := range []struct {
		o    orderResp
		want string
	}{
		{orderResp{Status: "NEW", Size: dv("1"), RemainingSize: dv("1")}, contract.StatusOpen},
		{orderResp{Status: "OPEN", Size: dv("1"), RemainingSize: dv("0.4")}, contract.StatusOpen},
		{orderResp{Status: "UNTRIGGERED", Size: dv("1"), RemainingSize: dv("1")}, contract.StatusPending},
		{orderResp{Status: "CLOSED", Size: dv("1"), RemainingSize: dv("0")}, contract.StatusFilled},
		{orderResp{Status: "CLOSED", Size: dv("1"), RemainingSize: dv("0.5"), CancelReason: "REMAINING_IOC_CANCEL"}, contract.StatusFilled},
		{orderResp{Status: "CLOSED", Size: dv("1"), RemainingSize: dv("1"), CancelReason: "USER_CANCELED"}, contract.StatusCancelled},
		{orderResp{Status: "CLOSED", Size: dv("1"), RemainingSize: dv("1"), CancelReason: "NOT_ENOUGH_MARGIN"}, contract.StatusRejected},
		{orderResp{Status: "CLOSED", Size: dv("1"), RemainingSize: dv("1"), CancelReason: "POST_ONLY_WOULD_CROSS"}, contract.StatusRejected},
		// Recorded live (issue 28): closed by the venue with nothing filled.
		{orderResp{Status: "CLOSED", Size: dv("1"), RemainingSize: dv("1"), CancelReason: "ORDER_SIZE_BELOW_MIN"}, contract.StatusRejected},
		// A reason not known, or none, with nothing filled is a rejection.
		{orderResp{Status: "CLOSED", Size: dv("1"), RemainingSize: dv("1"), CancelReason: "SOMETHING_NEW"}, contract.StatusRejected},
		{orderResp{Status: "CLOSED", Size: dv("1"), RemainingSize: dv("1")}, contract.StatusRejected},
		{orderResp{Status: "CLOSED", Size: dv("1"), RemainingSize: dv("1"), CancelReason: "REMAINING_IOC_CANCEL"}, contract.StatusCancelled},
		{orderResp{Status: "CLOSED", Size: dv("1"), RemainingSize: dv("0.5"), CancelReason: "USER_CANCELED"}, contract.StatusCancelled},
	} {
		if got := statusFromWire(tt.o); got != tt.want {
			t.Errorf("%+v: %s, want %s", tt.o, got, tt.want)
		}
	}
}

func TestFundingConvention(t *testing.T) {
	iv, hourly := FundingInterval(d("0.0008"), d("8"))
	if iv != 8 || !hourly.Equal(d("0.0001")) {
		t.Errorf("8h period: %d, %s", iv, hourly)
	}
	iv, hourly = FundingInterval(d("-0.0001"), d("1"))
	if iv != 1 || !hourly.Equal(d("-0.0001")) {
		t.Errorf("1h period: %d, %s", iv, hourly)
	}
	if iv, hourly = FundingInterval(d("0.0001"), d("0")); iv != 8 || !hourly.Equal(d("0.0000125")) {
		t.Errorf("no period: %d, %s", iv, hourly)
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	if got := NextFundingTime(now); got != time.Date(2026, 3, 4, 6, 0, 0, 0, time.UTC).Unix() {
		t.Errorf("next funding %d", got)
	}
	if got := NextFundingTime(now.Truncate(time.Hour)); got != time.Date(2026, 3, 4, 6, 0, 0, 0, time.UTC).Unix() {
		t.Errorf("on the hour: next funding %d, want the following hour", got)
	}
}

// dv is a wire decimal as Paradex sends it ("" is one it left out).
func dv(s string) dec {
	var v dec
	if err := v.UnmarshalJSON([]byte(`"` + s + `"`)); err != nil {
		panic(err)
	}
	return v
}
