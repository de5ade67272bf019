package hyperliquid

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/symbol"
	"github.com/shopspring/decimal"
)

// maxPriceDecimals is 6 for perps: a price has at most 6 − szDecimals
// decimals (fact sheet §6).
const maxPriceDecimals = 6

// priceDecimals is how many decimals a price may have: at most 5
// significant figures and at most 6 − szDecimals decimals; integers are
// always valid whatever their significant figures.
func priceDecimals(px decimal.Decimal, szDecimals int) int32 {
	// e = floor(log10(px)), from the coefficient's digit count.
	e := len(px.Abs().Coefficient().String()) - 1 + int(px.Exponent())
	return int32(max(0, min(maxPriceDecimals-szDecimals, 4-e)))
}

// Rounding directions for prices.
const (
	roundDown = iota
	roundUp
	roundNearest
)

// wirePrice rounds a price to the venue's rule in the given direction
// (buys down and sells up, so never worse than asked: DESIGN §7) and
// returns it with the string that goes on the wire (no exponent, no
// trailing zeros).
func wirePrice(px decimal.Decimal, szDecimals, dir int) (decimal.Decimal, string) {
	if !px.IsPositive() {
		return decimal.Zero, "0"
	}
	d := priceDecimals(px, szDecimals)
	var r decimal.Decimal
	switch dir {
	case roundDown:
		r = px.RoundFloor(d)
	case roundUp:
		r = px.RoundCeil(d)
	default:
		r = px.Round(d)
	}
	// Rounding up can add a digit (99999.5 → 100000), which is still valid:
	// integers always are. Rounding can also change the magnitude down
	// (0.099999 → 0.1), also valid. Nothing rounds to zero for px > 0 up or
	// nearest; down it may for absurdly small prices.
	return r, wireDecimal(r)
}

// wireSize rounds a size down to szDecimals.
func wireSize(sz decimal.Decimal, szDecimals int) (decimal.Decimal, string) {
	r := sz.RoundFloor(int32(szDecimals))
	return r, wireDecimal(r)
}

// wireDecimal formats like the SDK's float_to_wire: plain digits, no
// trailing zeros or dot, "-0" as "0".
func wireDecimal(d decimal.Decimal) string {
	if d.IsZero() {
		return "0"
	}
	s := d.String()
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

var reCloid = regexp.MustCompile(`^0x[0-9a-fA-F]{32}$`)

// Cloid derives the 16-byte client order id Hyperliquid takes from the
// gateway's clientOrderId: deterministic per credential, so a retry carries
// the same cloid (DESIGN §6). A clientOrderId that already is a cloid
// (0x + 32 hex) is used as is, lowercased.
func Cloid(credentialID, clientOrderID string) string {
	if reCloid.MatchString(clientOrderID) {
		return strings.ToLower(clientOrderID)
	}
	h := sha256.Sum256([]byte(credentialID + ":" + clientOrderID))
	return "0x" + hex.EncodeToString(h[:16])
}

// marketFromMeta builds the gateway market of one universe entry: BTC →
// BTC-USD-PERP, kPEPE → 1000PEPE-USD-PERP.
func marketFromMeta(a AssetMeta) (connector.Market, bool) {
	sym, err := symbol.Parse(a.Name)
	if err != nil {
		return connector.Market{}, false
	}
	step := func(decimals int) decimal.Decimal { return decimal.New(1, -int32(max(decimals, 0))) }
	return connector.Market{
		Canonical:   sym.Canonical("USD"),
		Native:      a.Name,
		Base:        sym.Base,
		Quote:       "USD",
		Multiplier:  max(sym.Multiplier, 1),
		TickSize:    step(maxPriceDecimals - a.SzDecimals), // the finest tick; 5 significant figures apply on top
		LotSize:     step(a.SzDecimals),
		MinNotional: decimal.NewFromInt(10), // "Order must have minimum value of $10."
		MaxLeverage: a.MaxLeverage,
	}, true
}

// intervals maps gateway candle minutes to Hyperliquid interval names.
var intervals = map[int]string{1: "1m", 5: "5m", 15: "15m", 60: "1h", 240: "4h", 1440: "1d"}

func sideFromWire(s string) contract.Side {
	if s == "B" {
		return contract.Buy
	}
	return contract.Sell
}

// orderTypes maps frontendOpenOrders orderType to gateway types.
var orderTypes = map[string]string{
	"Limit":              "LIMIT",
	"Market":             "MARKET",
	"Stop Market":        "STOP_MARKET",
	"Stop Limit":         "STOP_LIMIT",
	"Take Profit Market": "TAKE_PROFIT_MARKET",
	"Take Profit Limit":  "TAKE_PROFIT_LIMIT",
}

func dec(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero
	}
	return d
}

// orderFromWire converts an open order: remaining sz and origSz give the
// filled size; trigger orders are PENDING (fact sheet §7).
func orderFromWire(o FrontendOrder) contract.Order {
	typ, ok := orderTypes[o.OrderType]
	if !ok {
		typ = strings.ToUpper(strings.ReplaceAll(o.OrderType, " ", "_"))
	}
	out := contract.Order{
		ID:         strconv.FormatUint(uint64(o.Oid), 10),
		Market:     o.Coin,
		Side:       sideFromWire(o.Side),
		Type:       typ,
		Size:       dec(o.OrigSz),
		Price:      dec(o.LimitPx),
		FilledSize: dec(o.OrigSz).Sub(dec(o.Sz)),
		Status:     contract.StatusOpen,
		CreatedAt:  int64(o.Timestamp / 1000),
		ReduceOnly: o.ReduceOnly,
	}
	if o.IsTrigger {
		out.Status = contract.StatusPending
		t := dec(o.TriggerPx)
		out.TriggerPrice = &t
	}
	return out
}

func positionFromWire(p PositionWire) contract.Position {
	szi := dec(p.Szi)
	side := contract.Long
	if szi.IsNegative() {
		side = contract.Short
	}
	size := szi.Abs()
	mark := decimal.Zero
	if size.IsPositive() {
		mark = dec(p.PositionValue).DivRound(size, 8)
	}
	return contract.Position{
		Market:        p.Coin,
		Side:          side,
		Size:          size,
		EntryPrice:    dec(p.EntryPx),
		MarkPrice:     mark,
		UnrealizedPnl: dec(p.UnrealizedPnl),
		Leverage:      decimal.NewFromInt(int64(p.Leverage.Value)),
	}
}

// fillFromWire reads one fill. Its fee is fee alone: builderFee, when
// present, is "amount paid to builder, also included in fee" (WsFill,
// https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/websocket/subscriptions),
// so adding it would count the builder's share twice.
func fillFromWire(f UserFill) contract.Fill {
	out := contract.Fill{
		ID:        strconv.FormatUint(uint64(f.Tid), 10),
		OrderID:   strconv.FormatUint(uint64(f.Oid), 10),
		Market:    f.Coin,
		Side:      sideFromWire(f.Side),
		Size:      dec(f.Sz),
		Price:     dec(f.Px),
		Fee:       dec(f.Fee),
		Timestamp: int64(f.Time) / 1000,
	}
	if f.ClosedPnl != "" { // closedPnl: what the fill closed, before fees
		pnl := dec(f.ClosedPnl)
		out.RealizedPnl = &pnl
	}
	return out
}
