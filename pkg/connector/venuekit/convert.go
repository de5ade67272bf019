package venuekit

import (
	"regexp"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/symbol"
	"github.com/shopspring/decimal"
)

// Levels are up to n book levels of price and size pairs.
func Levels(in [][2]connector.Decimal, n int) []contract.Level {
	out := make([]contract.Level, 0, min(len(in), n))
	for _, l := range in {
		if len(out) == n {
			break
		}
		out = append(out, contract.Level{l[0].D(), l[1].D()})
	}
	return out
}

// NewMarket is the market a venue lists as native when the symbol parses
// and is quoted in quote (the one quote a connector lists); the venue adds
// its rules (tick, lot, minimums, leverage).
func NewMarket(native, quote string) (connector.Market, bool) {
	sym, err := symbol.Parse(native)
	if err != nil || sym.Quote != quote {
		return connector.Market{}, false
	}
	return connector.Market{Canonical: sym.Canonical(quote), Native: native, Base: sym.Base, Quote: quote,
		Multiplier: max(sym.Multiplier, 1)}, true
}

// ClientIDRule is a venue's rule for client order ids, checked before
// anything is sent.
type ClientIDRule struct {
	Venue   string
	Pattern *regexp.Regexp
	Takes   string // what the venue takes: "1 to 36 characters of letters, digits, - and _"
}

// Check refuses an id the venue would reject.
func (r ClientIDRule) Check(id string) error {
	if !r.Pattern.MatchString(id) {
		return contract.Errorf(contract.CodeInvalidRequest,
			"field \"clientOrderId\": %q cannot be sent to %s, which takes %s", id, r.Venue, r.Takes)
	}
	return nil
}

// Sides are a venue's words for buy and sell.
type Sides struct{ Buy, Sell string }

// Side reads the venue's word; anything but Sell is a buy.
func (s Sides) Side(w string) contract.Side {
	if w == s.Sell {
		return contract.Sell
	}
	return contract.Buy
}

// Wire is the venue's word for side.
func (s Sides) Wire(side contract.Side) string {
	if side == contract.Sell {
		return s.Sell
	}
	return s.Buy
}

// Bps converts a fee rate (0.0002) to basis points (2).
func Bps(rate decimal.Decimal) decimal.Decimal { return rate.Mul(decimal.NewFromInt(10000)) }
