package paper_test

import (
	"errors"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// start is a funding boundary (a multiple of 8h).
var start = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// newEngine returns an engine on a fake clock at start+offset.
func newEngine(t *testing.T, offset time.Duration) (*paper.Engine, *testenv.Clock) {
	t.Helper()
	c := testenv.NewClock(start.Add(offset))
	return paper.New(paper.Config{Seed: 42, Now: c.Now}), c
}

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func eq(t *testing.T, what string, got, want decimal.Decimal) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

func mustMark(t *testing.T, e *paper.Engine, market, price string) {
	t.Helper()
	if _, err := e.SetMarkPrice(market, d(price)); err != nil {
		t.Fatalf("set mark %s %s: %v", market, price, err)
	}
}

func mustPlace(t *testing.T, e *paper.Engine, acct string, req paper.OrderRequest) paper.Order {
	t.Helper()
	o, err := e.PlaceOrder(acct, req)
	if err != nil {
		t.Fatalf("place %+v: %v", req, err)
	}
	return o
}

func mustBalance(t *testing.T, e *paper.Engine, acct string) paper.Balance {
	t.Helper()
	b, err := e.Balance(acct)
	if err != nil {
		t.Fatalf("balance: %v", err)
	}
	return b
}

func wantErr(t *testing.T, err error, want ...error) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", want)
	}
	for _, w := range want {
		if !errors.Is(err, w) {
			t.Fatalf("got %v, want errors.Is %v", err, w)
		}
	}
}

const btc = "BTC-USD-PERP"
