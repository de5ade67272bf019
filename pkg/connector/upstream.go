package connector

import (
	"errors"
	"net/url"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// RateLimited is EXCHANGE_ERROR UPSTREAM_RATE_LIMITED with the seconds to
// wait (at least one).
func RateLimited(code, msg string, retryAfter int, format string, args ...any) *contract.Error {
	e := contract.Upstream(contract.ReasonUpstreamRateLimited, code, msg, format, args...)
	e.RetryAfterSeconds = max(retryAfter, 1)
	return e
}

// Unreachable is UPSTREAM_UNAVAILABLE for a transport failure talking to
// venue about what (a method and path).
func Unreachable(venue, what string, err error) *contract.Error {
	return contract.Upstream(contract.ReasonUpstreamUnavailable, "", "",
		"%s did not answer %s (%v); retry shortly (a placement is looked up by its clientOrderId first)", venue, what, ShortErr(err))
}

// ShortErr renders a transport error without its URL, which may carry a
// signed query string, and bounds its length.
func ShortErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// OrDefault is v, or d when v is zero (a venue answer that left it out).
func OrDefault(v, d decimal.Decimal) decimal.Decimal {
	if v.IsZero() {
		return d
	}
	return v
}

// Execution totals what an order (or several) executed.
type Execution struct {
	Size, Notional, Fee decimal.Decimal
}

// NewExecution is an empty total.
func NewExecution() Execution {
	return Execution{Size: decimal.Zero, Notional: decimal.Zero, Fee: decimal.Zero}
}

// Add counts one execution of size at price paying fee.
func (e Execution) Add(size, price, fee decimal.Decimal) Execution {
	return Execution{Size: e.Size.Add(size), Notional: e.Notional.Add(size.Mul(price)), Fee: e.Fee.Add(fee)}
}

// Plus adds another total.
func (e Execution) Plus(o Execution) Execution {
	return Execution{Size: e.Size.Add(o.Size), Notional: e.Notional.Add(o.Notional), Fee: e.Fee.Add(o.Fee)}
}

// Price is the size-weighted average price to four more decimals than the
// market's tick (at least eight), zero when nothing executed.
func (e Execution) Price(m Market) decimal.Decimal {
	if !e.Size.IsPositive() {
		return decimal.Zero
	}
	return e.Notional.DivRound(e.Size, max(8, -m.TickSize.Exponent()+4))
}
