package contract

import (
	"testing"

	"github.com/shopspring/decimal"
)

func TestFundingHourly(t *testing.T) {
	for _, tt := range []struct {
		rate  string
		hours int
		want  string
	}{{"0.0008", 8, "0.0001"}, {"0.0001", 1, "0.0001"}, {"-0.0003", 4, "-0.000075"}, {"0.0001", 3, "0.000033333333"}, {"0.0005", 0, "0.0005"}} {
		r := FundingRateResult{FundingRate: decimal.RequireFromString(tt.rate), FundingIntervalHours: tt.hours}
		r.Hourly()
		e := MarketEntry{FundingRate: r.FundingRate, FundingIntervalHours: tt.hours}
		e.Hourly()
		if r.FundingRateHourly.String() != tt.want || !e.FundingRateHourly.Equal(r.FundingRateHourly) {
			t.Errorf("%s over %d h: %s / %s, want %s", tt.rate, tt.hours, r.FundingRateHourly, e.FundingRateHourly, tt.want)
		}
	}
}
