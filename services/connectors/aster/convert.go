package aster

import (
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/symbol"
	"github.com/shopspring/decimal"
)

// quote is the only quote asset the connector lists: USDT-margined
// perpetuals.
const quote = "USDT"

// symbolMeta is what the adapter keeps about a symbol beyond
// connector.Market: the market-order lot rules (MARKET_LOT_SIZE).
type symbolMeta struct {
	marketStep   decimal.Decimal
	marketMaxQty decimal.Decimal
}

// marketsFromInfo turns exchangeInfo into the tradable USDT perpetuals
// (contractType PERPETUAL, status TRADING) with their filters, and the
// market-order rules by native symbol.
func marketsFromInfo(info exchangeInfo) ([]connector.Market, map[string]symbolMeta) {
	var out []connector.Market
	meta := map[string]symbolMeta{}
	for _, s := range info.Symbols {
		if s.ContractType != "PERPETUAL" || s.Status != "TRADING" || s.QuoteAsset != quote {
			continue
		}
		sym, err := symbol.Parse(s.Symbol)
		if err != nil || sym.Quote != quote {
			continue
		}
		m := connector.Market{
			Canonical:  sym.Canonical(quote),
			Native:     s.Symbol,
			Base:       sym.Base,
			Quote:      quote,
			Multiplier: max(sym.Multiplier, 1),
		}
		var sm symbolMeta
		for _, f := range s.Filters {
			switch f.FilterType {
			case "PRICE_FILTER":
				m.TickSize = f.TickSize
			case "LOT_SIZE":
				m.LotSize, m.MinSize = f.StepSize, f.MinQty
			case "MARKET_LOT_SIZE":
				sm.marketStep, sm.marketMaxQty = f.StepSize, f.MaxQty
			case "MIN_NOTIONAL":
				// -4164: "must be no smaller than N (unless you choose reduce only)".
				m.MinNotional, m.ReduceOnlyBelowMinNotional = f.Notional, true
			}
		}
		if !m.TickSize.IsPositive() || !m.LotSize.IsPositive() {
			continue
		}
		out = append(out, m)
		meta[s.Symbol] = sm
	}
	return out, meta
}

// weightLimit is exchangeInfo's REQUEST_WEIGHT per minute, or 0.
func weightLimit(info exchangeInfo) int {
	for _, r := range info.RateLimits {
		if r.RateLimitType == "REQUEST_WEIGHT" && r.Interval == "MINUTE" && r.IntervalNum == 1 {
			return r.Limit
		}
	}
	return 0
}

// statusFromWire maps Aster's order status to the contract's (fact
// sheet §6). A partly filled order still rests, so it is OPEN; its
// filledSize shows the progress.
//
// EXPIRED and EXPIRED_IN_MATCH are Aster ending the order itself (an IOC
// or post-only that could not stand, self-trade prevention): with nothing
// filled a refusal, REJECTED, as is a status not on Aster's list
// (https://developers.aster.com/docs/derivatives/usds-margined-futures/common-definition,
// order status); with a part filled CANCELLED.
func statusFromWire(s string, filled bool) string {
	switch s {
	case "NEW", "PARTIALLY_FILLED":
		return contract.StatusOpen
	case "FILLED":
		return contract.StatusFilled
	case "CANCELED":
		return contract.StatusCancelled
	case "REJECTED":
		return contract.StatusRejected
	}
	if filled {
		return contract.StatusCancelled
	}
	return contract.StatusRejected
}

// parseOrderID reads an order id the connector handed out: digits.
func parseOrderID(id string) (int64, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return 0, contract.Errorf(contract.CodeInvalidRequest, "field \"orderId\": %q is not an Aster order id (digits)", id)
	}
	return n, nil
}

// conditional reports whether an order type waits for a trigger.
func conditional(typ string) bool {
	switch typ {
	case "STOP", "STOP_MARKET", "TAKE_PROFIT", "TAKE_PROFIT_MARKET", "TRAILING_STOP_MARKET":
		return true
	}
	return false
}

// orderStatus is statusFromWire with NEW on a conditional type PENDING
// (fact sheet §6).
func orderStatus(o order) string {
	if o.Status == "NEW" && conditional(o.Type) {
		return contract.StatusPending
	}
	return statusFromWire(o.Status, o.ExecutedQty.IsPositive())
}

// orderFromWire maps an order; a STOP_MARKET or TAKE_PROFIT_MARKET shows
// its stopPrice as price and triggerPrice (fact sheet §4 getOrders).
func orderFromWire(o order) contract.Order {
	out := contract.Order{
		ID:            strconv.FormatInt(int64(o.OrderID), 10),
		Market:        o.Symbol,
		Side:          contract.Side(o.Side),
		Type:          o.Type,
		Size:          o.OrigQty,
		Price:         o.Price,
		FilledSize:    o.ExecutedQty,
		Status:        orderStatus(o),
		CreatedAt:     int64(o.Time / 1000),
		ReduceOnly:    o.ReduceOnly,
		ClientOrderID: o.ClientOrderID,
	}
	if conditional(o.Type) && o.StopPrice.IsPositive() {
		trigger := o.StopPrice
		out.TriggerPrice = &trigger
		if !o.Price.IsPositive() {
			out.Price = trigger
		}
	}
	return out
}

func positionFromWire(p positionRisk) contract.Position {
	side := contract.Long
	switch {
	case p.PositionSide == "SHORT":
		side = contract.Short
	case p.PositionSide != "LONG" && p.PositionAmt.IsNegative():
		side = contract.Short
	}
	return contract.Position{
		Market:        p.Symbol,
		Side:          side,
		Size:          p.PositionAmt.Abs(),
		EntryPrice:    p.EntryPrice,
		MarkPrice:     p.MarkPrice,
		UnrealizedPnl: p.UnRealizedProfit,
		Leverage:      p.Leverage.D(),
	}
}

func fillFromWire(t userTrade) contract.Fill {
	out := contract.Fill{
		ID:        strconv.FormatInt(int64(t.ID), 10),
		OrderID:   strconv.FormatInt(int64(t.OrderID), 10),
		Market:    t.Symbol,
		Side:      contract.Side(t.Side),
		Size:      t.Qty,
		Price:     t.Price,
		Fee:       t.Commission.Abs(), // its sign is unconfirmed (fact sheet §4 getFills)
		Timestamp: int64(t.Time / 1000),
	}
	if t.RealizedPnl.Given {
		pnl := t.RealizedPnl.D()
		out.RealizedPnl = &pnl
	}
	return out
}

// candleFromWire reads one kline row.
func candleFromWire(k kline) (contract.Candle, bool) {
	if len(k) < 6 {
		return contract.Candle{}, false
	}
	var openMs int64
	var vals [5]decimal.Decimal
	if json.Unmarshal(k[0], &openMs) != nil {
		return contract.Candle{}, false
	}
	for i := range vals {
		if json.Unmarshal(k[i+1], &vals[i]) != nil {
			return contract.Candle{}, false
		}
	}
	return contract.Candle{Time: openMs / 1000, Open: vals[0], High: vals[1], Low: vals[2], Close: vals[3], Volume: vals[4]}, true
}

// intervals maps candle minutes to Aster's kline intervals.
var intervals = map[int]string{1: "1m", 5: "5m", 15: "15m", 60: "1h", 240: "4h", 1440: "1d"}

// depthLimits are the book sizes /fapi/v3/depth accepts (fact sheet §0 #8).
var depthLimits = []int{5, 10, 20, 50, 100, 500, 1000}

// depthLimit rounds a requested depth up to an accepted limit.
func depthLimit(depth int) int {
	for _, l := range depthLimits {
		if depth <= l {
			return l
		}
	}
	return depthLimits[len(depthLimits)-1]
}

// depthWeight is the IP weight of a book of that limit.
func depthWeight(limit int) int {
	switch {
	case limit <= 50:
		return 2
	case limit <= 100:
		return 5
	case limit <= 500:
		return 10
	}
	return 20
}

func levels(in [][2]decimal.Decimal, n int) []contract.Level {
	out := make([]contract.Level, 0, min(len(in), n))
	for _, l := range in {
		if len(out) == n {
			break
		}
		out = append(out, contract.Level{l[0], l[1]})
	}
	return out
}

// clientIDPattern is Aster's rule for newClientOrderId and clientAlgoId
// (fact sheet §7).
var clientIDPattern = regexp.MustCompile(`^[.A-Z:/a-z0-9_-]{1,36}$`)

// checkClientID refuses an id Aster would reject with -4015, before
// anything is sent.
func checkClientID(id string) error {
	if !clientIDPattern.MatchString(id) {
		return contract.Errorf(contract.CodeInvalidRequest,
			"field \"clientOrderId\": %q cannot be sent to Aster, which takes 1 to 36 characters of letters, digits and . : / _ -", id)
	}
	return nil
}

// fmtDec renders a decimal as Aster takes it: plain, no exponent.
func fmtDec(d decimal.Decimal) string { return d.String() }

// bps converts a fee rate (0.0002) to basis points (2).
func bps(rate decimal.Decimal) decimal.Decimal { return rate.Mul(decimal.NewFromInt(10000)) }
