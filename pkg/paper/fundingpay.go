package paper

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// FundingPayment is one funding payment booked on a position.
type FundingPayment struct {
	Market       string
	Amount       decimal.Decimal // what the wallet got: negative when the account paid
	Rate         decimal.Decimal // the funding rate applied
	PositionSize decimal.Decimal // signed: negative for a short
	Time         time.Time
}

func (a *account) recordFunding(p FundingPayment) {
	a.fundings.add(p.Market, p)
}

// FundingPayments returns the account's funding payments, newest first, on
// one market or (market "") all, at or after since (zero: no bound);
// limit <= 0 means 100.
func (e *Engine) FundingPayments(id, market string, since time.Time, limit int) (res []FundingPayment, err error) {
	e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	a, err := e.account(id)
	if err != nil {
		return nil, fmt.Errorf("funding payments: %w", err)
	}
	if market != "" {
		m, err := e.market(market)
		if err != nil {
			return nil, fmt.Errorf("funding payments: %w", err)
		}
		market = m.spec.Symbol
	}
	if limit <= 0 {
		limit = 100
	}
	return a.fundings.newest(market, limit, fundingNewer, func(p FundingPayment) bool { return !p.Time.Before(since) }), nil
}
