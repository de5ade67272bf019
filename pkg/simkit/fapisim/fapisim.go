// Package fapisim holds what the simulators of venues with Binance
// USDⓈ-M Futures' REST shapes (Binance, Aster) share: a request as a
// handler sees it, the {code, msg} error, and the handlers whose
// behaviour the venues document alike (income history, modify order,
// countdown cancel-all, leverage and margin type). Each simulator keeps its
// own routes, authentication and venue-only endpoints.
package fapisim

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// Req is one request as a handler sees it: its account and parameters
// (query string values win over body values).
type Req struct {
	Key  string // the account
	Vals url.Values
	Now  time.Time // the venue's clock
}

// Get is a parameter's value, "" when absent.
func (q *Req) Get(name string) string { return q.Vals.Get(name) }

// APIErr is an error answer: HTTP status and {code, msg}.
type APIErr struct {
	Status int
	Code   int
	Msg    string
}

// Errf is an error answer with a formatted message.
func Errf(status, code int, format string, args ...any) *APIErr {
	return &APIErr{Status: status, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// BadParam is -1102 for a missing or malformed parameter.
func BadParam(name string) *APIErr {
	return Errf(400, -1102, "Mandatory parameter '%s' was not sent, was empty/null, or malformed.", name)
}

// W is a constant request weight.
func W(n int) func(*Req) int { return func(*Req) int { return n } }

// OrderFields is what the order endpoints read, from a request or a batch slot.
type OrderFields func(name string) string

// ParseQty reads quantity: positive and a multiple of lot.
func ParseQty(get OrderFields, lot decimal.Decimal) (decimal.Decimal, *APIErr) {
	qty, err := decimal.NewFromString(get("quantity"))
	if err != nil {
		return qty, BadParam("quantity")
	}
	if !qty.IsPositive() {
		return qty, Errf(400, -4003, "Quantity less than or equal to zero.")
	}
	if !qty.Mod(lot).IsZero() {
		return qty, Errf(400, -4023, "Quantity not increased by step size.")
	}
	return qty, nil
}

// ParsePrice reads a price parameter: positive and a multiple of tick.
func ParsePrice(get OrderFields, name string, tick decimal.Decimal) (decimal.Decimal, *APIErr) {
	p, err := decimal.NewFromString(get(name))
	if err != nil {
		return p, BadParam(name)
	}
	if !p.IsPositive() {
		return p, Errf(400, -4013, "Price less than min price.")
	}
	if !p.Mod(tick).IsZero() {
		return p, Errf(400, -4014, "Price not increased by tick size.")
	}
	return p, nil
}

// Immediate reports whether a conditional order would trigger at once:
// STOP_MARKET buys when the price rises to its trigger and sells when it
// falls; TAKE_PROFIT_MARKET the other way.
func Immediate(typ, side string, mark, trigger decimal.Decimal) bool {
	sellsBelow := (typ == "STOP_MARKET") == (side == "SELL")
	if sellsBelow {
		return mark.LessThanOrEqual(trigger)
	}
	return mark.GreaterThanOrEqual(trigger)
}

// Leverage is Change Initial Leverage on market m: 1 to its maximum
// (-4028 otherwise); refused is the engine's refusal as the venue's code.
func Leverage(eng *paper.Engine, q *Req, m paper.MarketInfo, refused func(error) *APIErr) (any, *APIErr) {
	lev, err := strconv.Atoi(q.Get("leverage"))
	if err != nil {
		return nil, BadParam("leverage")
	}
	if lev < 1 || lev > m.MaxLeverage {
		return nil, Errf(400, -4028, "Leverage %d is not valid", lev)
	}
	got, err := eng.SetLeverage(q.Key, m.Symbol, lev)
	if err != nil {
		return nil, refused(err)
	}
	return map[string]any{"leverage": got, "maxNotionalValue": "1000000", "symbol": m.Symbol}, nil
}
