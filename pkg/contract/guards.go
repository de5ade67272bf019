package contract

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/perpgate/perpgate/pkg/symbol"
	"github.com/shopspring/decimal"
)

// Guard limits a client can set.
const (
	// MaxAllowedMarkets bounds allowedMarkets.
	MaxAllowedMarkets = 200
	// MaxGuardLeverage is the highest maxLeverage worth setting: setLeverage
	// takes at most this.
	MaxGuardLeverage = 200
)

// MaxGuardNotional is the highest notional cap a key can carry: a trillion
// in quote currency is past any real limit, and its millionths still fit
// the int64 of the daily notional ledger.
var MaxGuardNotional = decimal.New(1, 12)

// GuardFields are the JSON names of the guard fields: DESIGN §12's, then
// §13's maxPositionNotional.
var GuardFields = []string{"readOnly", "allowedMarkets", "maxOrderNotional", "maxDailyNotional", "maxLeverage", "maxPositionNotional"}

// Normalize checks g and returns it with allowedMarkets in canonical form
// (BTC-USDT-PERP; a bare base such as BTC stays BTC and means that asset on
// every quote), sorted and without repeats. INVALID_REQUEST names the bad
// field.
func (g Guards) Normalize() (Guards, *Error) {
	if len(g.AllowedMarkets) > MaxAllowedMarkets {
		return g, Errorf(CodeInvalidRequest, "allowedMarkets holds at most %d markets", MaxAllowedMarkets)
	}
	var markets []string
	for _, m := range g.AllowedMarkets {
		s, err := symbol.Parse(m)
		if err != nil {
			return g, Errorf(CodeInvalidRequest, "allowedMarkets: %v", err)
		}
		c := s.PrefixedBase()
		if s.Quote != "" {
			c = s.Canonical("")
		}
		if !slices.Contains(markets, c) {
			markets = append(markets, c)
		}
	}
	slices.Sort(markets)
	g.AllowedMarkets = markets
	for _, c := range []struct {
		name string
		v    *decimal.Decimal
	}{{"maxOrderNotional", g.MaxOrderNotional}, {"maxDailyNotional", g.MaxDailyNotional}, {"maxPositionNotional", g.MaxPositionNotional}} {
		if ce := checkCap(c.name, c.v); ce != nil {
			return g, ce
		}
	}
	if g.MaxLeverage < 0 || g.MaxLeverage > MaxGuardLeverage {
		return g, Errorf(CodeInvalidRequest, "maxLeverage must be 1 to %d, or null for no limit", MaxGuardLeverage)
	}
	return g, nil
}

// PatchGuards applies a PATCH body to g: a field absent stays, a field
// null is removed (no limit), any other value replaces it. Fields other
// than the guards are refused, naming the field.
func PatchGuards(g Guards, body map[string]json.RawMessage) (Guards, *Error) {
	for name, raw := range body {
		null := strings.TrimSpace(string(raw)) == "null"
		var err error
		switch name {
		case "readOnly":
			g.ReadOnly = false
			if !null {
				err = json.Unmarshal(raw, &g.ReadOnly)
			}
		case "allowedMarkets":
			g.AllowedMarkets = nil
			if !null {
				err = json.Unmarshal(raw, &g.AllowedMarkets)
			}
		case "maxOrderNotional", "maxDailyNotional", "maxPositionNotional":
			d, ce := decodeCap(name, raw, null)
			if ce != nil {
				return g, ce
			}
			*g.cap(name) = d
		case "maxLeverage":
			g.MaxLeverage = 0
			if !null {
				err = json.Unmarshal(raw, &g.MaxLeverage)
				if err == nil && g.MaxLeverage == 0 {
					return g, Errorf(CodeInvalidRequest, "maxLeverage must be 1 to %d, or null for no limit", MaxGuardLeverage)
				}
			}
		default:
			return g, Errorf(CodeInvalidRequest, "unknown field %q: a key's guards are %s", name, strings.Join(GuardFields, ", "))
		}
		if err != nil {
			return g, Errorf(CodeInvalidRequest, "field %s must be %s, or null to remove it", name, guardKind(name))
		}
	}
	return g.Normalize()
}

// capSpec is a notional cap in the /v1 decimal grammar: a positive plain
// decimal string, no exponent, bounded in length.
var capSpec = FieldSpec{Positive: true}

// decodeCap reads a notional cap as /v1 reads a decimal parameter; its
// error names the field.
func decodeCap(name string, raw json.RawMessage, null bool) (*decimal.Decimal, *Error) {
	if null {
		return nil, nil
	}
	d, ce := parseDecimal(&capSpec, raw, name)
	if ce != nil {
		return nil, ce
	}
	return &d, nil
}

// checkCap refuses a cap that is not positive, above MaxGuardNotional, or
// longer than /v1 accepts; nil is no limit.
func checkCap(name string, v *decimal.Decimal) *Error {
	if v == nil {
		return nil
	}
	if !v.IsPositive() || v.GreaterThan(MaxGuardNotional) || len(v.String()) > maxDecimalLen {
		return Errorf(CodeInvalidRequest, "%s must be a positive decimal string of at most %d characters, up to %s, such as \"1000\"; or null for no limit",
			name, maxDecimalLen, MaxGuardNotional)
	}
	return nil
}

// cap is the notional cap named name.
func (g *Guards) cap(name string) **decimal.Decimal {
	switch name {
	case "maxOrderNotional":
		return &g.MaxOrderNotional
	case "maxDailyNotional":
		return &g.MaxDailyNotional
	}
	return &g.MaxPositionNotional
}

func guardKind(name string) string {
	switch name {
	case "readOnly":
		return "true or false"
	case "allowedMarkets":
		return "an array of market symbols"
	}
	return "an integer"
}

// AllowsMarket reports whether allowedMarkets lets the key trade the
// market with this canonical symbol (BTC-USDT-PERP): an empty list allows
// every market; a bare base allows the asset on every quote.
func (g Guards) AllowsMarket(canonical string) bool {
	if len(g.AllowedMarkets) == 0 {
		return true
	}
	s, err := symbol.Parse(canonical)
	if err != nil {
		return false
	}
	return slices.Contains(g.AllowedMarkets, s.Canonical("")) || slices.Contains(g.AllowedMarkets, s.PrefixedBase())
}
