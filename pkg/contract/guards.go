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

// GuardFields are the JSON names of the guard fields, in DESIGN §12 order.
var GuardFields = []string{"readOnly", "allowedMarkets", "maxOrderNotional", "maxDailyNotional", "maxLeverage"}

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
	}{{"maxOrderNotional", g.MaxOrderNotional}, {"maxDailyNotional", g.MaxDailyNotional}} {
		if c.v != nil && !c.v.IsPositive() {
			return g, Errorf(CodeInvalidRequest, "%s must be a positive decimal string such as \"1000\", or null for no limit", c.name)
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
		case "maxOrderNotional":
			g.MaxOrderNotional, err = decodeCap(raw, null)
		case "maxDailyNotional":
			g.MaxDailyNotional, err = decodeCap(raw, null)
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

func decodeCap(raw json.RawMessage, null bool) (*decimal.Decimal, error) {
	if null {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return nil, err
	}
	return &d, nil
}

func guardKind(name string) string {
	switch name {
	case "readOnly":
		return "true or false"
	case "allowedMarkets":
		return "an array of market symbols"
	case "maxLeverage":
		return "an integer"
	}
	return "a decimal string"
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
