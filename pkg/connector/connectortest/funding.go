package connectortest

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// FundingCase is an adapter in front of a simulator built on a paper
// engine, on a clock the test moves; the simulator should answer small
// pages (two entries or so) so the adapter has to page.
type FundingCase struct {
	Adapter  connector.FundingPaymentsReader
	Cred     connector.Credential
	Engine   *paper.Engine // the simulator's
	Account  string        // the credential's account in the engine
	Clock    *testenv.Clock
	Interval time.Duration // the engine's funding interval
	Places   int32         // the venue's precision of amounts; 0: exact
	Detail   bool          // the venue reports rate and position size
}

// CheckFundingPayments opens a position on every market of the engine,
// lets two funding times pass and wants GetFundingPayments to return all
// the engine booked (more than a page), and only those since a time.
func CheckFundingPayments(t *testing.T, fc FundingCase) {
	t.Helper()
	syms := fc.Engine.MarketSymbols()
	for i, sym := range syms {
		side := paper.Buy
		if i%2 == 1 {
			side = paper.Sell
		}
		m, _ := fc.Engine.Market(sym)
		size := m.LotSize.Mul(decimal.NewFromInt(10))
		if m.MinNotional.IsPositive() {
			size = m.MinNotional.Div(m.MarkPrice).Mul(decimal.NewFromInt(2)).Div(m.LotSize).Ceil().Mul(m.LotSize)
		}
		if _, err := fc.Engine.PlaceOrder(fc.Account, paper.OrderRequest{Market: sym, Side: side, Type: paper.Market, Size: size}); err != nil {
			t.Fatalf("open %s: %v", sym, err)
		}
	}
	first := fc.Clock.Now().Truncate(fc.Interval).Add(fc.Interval)
	fc.Clock.Set(first.Add(time.Second))
	fc.Clock.Set(first.Add(fc.Interval).Add(time.Second))
	want, err := fc.Engine.FundingPayments(fc.Account, "", time.Time{}, 1000)
	if err != nil || len(want) != 2*len(syms) {
		t.Fatalf("engine booked %d payments (%v), want %d", len(want), err, 2*len(syms))
	}
	ctx := context.Background()
	got, err := fc.Adapter.GetFundingPayments(ctx, fc.Cred, nil, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "all", got, want, fc)
	later, err := fc.Adapter.GetFundingPayments(ctx, fc.Cred, nil, first.Add(time.Minute).Unix(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "since", later, want[:len(syms)], fc)
}

func compare(t *testing.T, what string, got []contract.FundingPayment, want []paper.FundingPayment, fc FundingCase) {
	t.Helper()
	sort.SliceStable(got, func(i, j int) bool { return got[i].Time > got[j].Time })
	if len(got) != len(want) {
		t.Fatalf("%s: %d payments, want %d: %+v", what, len(got), len(want), got)
	}
	type key struct {
		time   int64
		amount string
	}
	left := map[key]int{}
	for _, w := range want {
		amount := w.Amount
		if fc.Places > 0 {
			amount = amount.Round(fc.Places)
		}
		left[key{w.Time.Unix(), amount.String()}]++
	}
	for _, g := range got {
		k := key{g.Time, g.Amount.String()}
		if left[k] == 0 {
			t.Errorf("%s: payment %s at %d (%s) is not one the venue booked", what, g.Amount, g.Time, g.Market)
		}
		left[k]--
		if fc.Detail != (g.Rate != nil && g.PositionSize != nil) {
			t.Errorf("%s: payment %+v: rate and size given %v, want %v", what, g, g.Rate != nil, fc.Detail)
		}
	}
}
