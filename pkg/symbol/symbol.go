// Package symbol normalizes the market symbols clients send (BTC,
// btc-usd-perp, BTC/USDT:USDT, BTCUSDT, 1000PEPE, kPEPE, ...) into one
// Symbol, and renders the canonical BASE-QUOTE-PERP form that every market
// in a gateway response uses (DESIGN §7). It knows nothing about which
// markets a venue lists: the connector runtime matches a Symbol against
// the venue's market list.
package symbol

import (
	"strconv"
	"strings"
)

// MaxLength is the longest input Parse accepts, in bytes.
const MaxLength = 40

// MaxBaseLength is the longest base Parse accepts, counting its multiplier
// prefix (1000PEPE is 8), so that every canonical form fits in MaxLength.
const MaxBaseLength = MaxLength - len("-USDT-PERP")

// MaxMultiplier is the largest multiplier prefix Parse accepts (1000000000PEPE).
const MaxMultiplier = 1_000_000_000

// quotes are the quote currencies Parse recognizes.
var quotes = []string{"USDT", "USDC", "USD"}

// suffixes mark a perpetual contract: BTC-PERP, BTC/USDT-P, BTC-USDT-SWAP,
// BTC-PERPETUAL.
var suffixes = []string{"PERP", "P", "SWAP", "PERPETUAL"}

// Symbol is a perpetual market as a client named it, normalized.
type Symbol struct {
	// Base is the traded asset in upper case, without any multiplier
	// prefix: PEPE for 1000PEPE and kPEPE.
	Base string
	// Quote is USD, USDT or USDC, or empty when the input named none
	// (BTC, BTC-PERP); the venue then supplies its own quote.
	Quote string
	// Multiplier is how many units of Base one contract unit is: 1000 for
	// 1000PEPE and kPEPE, 1 otherwise. Zero is read as 1.
	Multiplier int
}

// IsQuote reports whether q (in any case) is a quote currency Parse knows:
// USD, USDT or USDC.
func IsQuote(q string) bool {
	q = strings.ToUpper(q)
	for _, k := range quotes {
		if q == k {
			return true
		}
	}
	return false
}

func (s Symbol) mult() int { return max(s.Multiplier, 1) }

// PrefixedBase returns the base with its multiplier as a decimal prefix,
// the form USDT venues list and the one canonical symbols use: 1000PEPE for
// PEPE×1000, BTC for BTC.
func (s Symbol) PrefixedBase() string {
	if m := s.mult(); m > 1 {
		return strconv.Itoa(m) + s.Base
	}
	return s.Base
}

// KiloBase returns the base in the Hyperliquid style: kPEPE for PEPE×1000.
// Multipliers other than 1000 have no k form and fall back to
// PrefixedBase.
func (s Symbol) KiloBase() string {
	if s.mult() == 1000 {
		return "k" + s.Base
	}
	return s.PrefixedBase()
}

// Canonical returns the gateway's canonical form BASE-QUOTE-PERP with the
// given quote, or with the symbol's own quote when quote is empty:
// Symbol{Base: "PEPE", Multiplier: 1000}.Canonical("USDT") is
// 1000PEPE-USDT-PERP. The multiplier is always written as a decimal prefix
// (never kPEPE), so one canonical name serves every venue. When neither
// quote is known the result is BASE-PERP. Parse(s.Canonical(q)) gives s
// back with that quote.
func (s Symbol) Canonical(quote string) string {
	if quote == "" {
		quote = s.Quote
	}
	if quote == "" {
		return s.PrefixedBase() + "-PERP"
	}
	return s.PrefixedBase() + "-" + strings.ToUpper(quote) + "-PERP"
}

// String returns the canonical form with the symbol's own quote.
func (s Symbol) String() string { return s.Canonical("") }
