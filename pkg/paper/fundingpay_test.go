package paper_test

import (
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
)

// TestFundingPaymentsHistory: every funding payment the engine books is
// recorded with its market, signed amount, rate and position size, newest
// first, filtered by market and time and cut to the limit.
func TestFundingPaymentsHistory(t *testing.T) {
	e, c := newEngine(t, -5*time.Second)
	mustPlace(t, e, "long", paper.OrderRequest{Market: btc, Side: paper.Buy, Type: paper.Market, Size: d("0.1")})
	mustPlace(t, e, "long", paper.OrderRequest{Market: "ETH-USD-PERP", Side: paper.Sell, Type: paper.Market, Size: d("1")})
	c.Advance(5 * time.Second)
	f, _ := e.Funding(btc)
	p, _ := e.MarkPrice(btc)
	c.Advance(8 * time.Hour) // a second funding time

	all, err := e.FundingPayments("long", "", time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 4 {
		t.Fatalf("got %d payments, want 2 markets x 2 funding times: %+v", len(all), all)
	}
	if !all[0].Time.Equal(start.Add(8*time.Hour)) || !all[3].Time.Equal(start) {
		t.Fatalf("not newest first from the two funding times: %v ... %v", all[0].Time, all[3].Time)
	}
	var first paper.FundingPayment
	for _, pay := range all[2:] {
		if pay.Market == btc {
			first = pay
		}
	}
	eq(t, "btc amount", first.Amount, d("0.1").Mul(p.Mark).Mul(f.Rate).Neg())
	eq(t, "btc rate", first.Rate, f.Rate)
	eq(t, "btc size", first.PositionSize, d("0.1"))
	sum := d("0")
	for _, pay := range all {
		sum = sum.Add(pay.Amount)
	}
	eq(t, "sum of payments", sum, mustBalance(t, e, "long").FundingPaid.Neg())

	eth, _ := e.FundingPayments("long", "ETH-USD-PERP", time.Time{}, 0)
	if len(eth) != 2 || eth[0].Market != "ETH-USD-PERP" || eth[0].PositionSize.Sign() >= 0 {
		t.Fatalf("ETH filter: %+v", eth)
	}
	recent, _ := e.FundingPayments("long", "", start.Add(time.Hour), 1)
	if len(recent) != 1 || !recent[0].Time.Equal(start.Add(8*time.Hour)) {
		t.Fatalf("since and limit: %+v", recent)
	}
	if none, _ := e.FundingPayments("flat", "", time.Time{}, 0); len(none) != 0 {
		t.Fatalf("an account without positions has payments: %+v", none)
	}
}
