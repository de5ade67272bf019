package fapi

import (
	"encoding/json"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// SymbolMeta is what an adapter keeps about a symbol beyond
// connector.Market: the market-order lot rules (MARKET_LOT_SIZE).
type SymbolMeta struct {
	MarketStep   decimal.Decimal
	MarketMaxQty decimal.Decimal
}

// Markets turns exchangeInfo into the tradable perpetuals quoted in quote
// (contractType PERPETUAL, status TRADING) with their filters, and the
// market-order rules by native symbol.
func Markets(info ExchangeInfo, quote string) ([]connector.Market, map[string]SymbolMeta) {
	var out []connector.Market
	meta := map[string]SymbolMeta{}
	for _, s := range info.Symbols {
		if s.ContractType != "PERPETUAL" || s.Status != "TRADING" || s.QuoteAsset != quote {
			continue
		}
		m, ok := venuekit.NewMarket(s.Symbol, quote)
		if !ok {
			continue
		}
		var sm SymbolMeta
		for _, f := range s.Filters {
			switch f.FilterType {
			case "PRICE_FILTER":
				m.TickSize = f.TickSize
			case "LOT_SIZE":
				m.LotSize, m.MinSize = f.StepSize, f.MinQty
			case "MARKET_LOT_SIZE":
				sm.MarketStep, sm.MarketMaxQty = f.StepSize, f.MaxQty
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

// WeightLimit is exchangeInfo's REQUEST_WEIGHT per minute, or 0.
func WeightLimit(info ExchangeInfo) int {
	for _, r := range info.RateLimits {
		if r.RateLimitType == "REQUEST_WEIGHT" && r.Interval == "MINUTE" && r.IntervalNum == 1 {
			return r.Limit
		}
	}
	return 0
}

// Status maps an order status to the contract's. A partly filled order
// still rests, so it is OPEN; its filledSize shows the progress.
//
// EXPIRED and EXPIRED_IN_MATCH are the venue ending the order itself (an
// IOC or post-only that could not stand, self-trade prevention): with
// nothing filled a refusal, REJECTED, as is a status not on the venue's
// list (https://developers.binance.com/docs/derivatives/usds-margined-futures/common-definition,
// order status); with a part filled CANCELLED.
func Status(s string, filled bool) string {
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

// Fill maps a trade; fee is what the connector reads as the trade's fee.
func Fill(t UserTrade, fee decimal.Decimal) contract.Fill {
	out := contract.Fill{
		ID:        strconv.FormatInt(int64(t.ID), 10),
		OrderID:   strconv.FormatInt(int64(t.OrderID), 10),
		Market:    t.Symbol,
		Side:      contract.Side(t.Side),
		Size:      t.Qty,
		Price:     t.Price,
		Fee:       fee,
		Timestamp: int64(t.Time / 1000),
	}
	if t.RealizedPnl.Given {
		pnl := t.RealizedPnl.D()
		out.RealizedPnl = &pnl
	}
	return out
}

// Candle reads one kline row.
func Candle(k Kline) (contract.Candle, bool) {
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

// Intervals maps candle minutes to kline intervals.
var Intervals = map[int]string{1: "1m", 5: "5m", 15: "15m", 60: "1h", 240: "4h", 1440: "1d"}

// depthLimits are the book sizes depth accepts.
var depthLimits = []int{5, 10, 20, 50, 100, 500, 1000}

// DepthLimit rounds a requested depth up to an accepted limit.
func DepthLimit(depth int) int {
	for _, l := range depthLimits {
		if depth <= l {
			return l
		}
	}
	return depthLimits[len(depthLimits)-1]
}

// DepthWeight is the IP weight of a book of that limit.
func DepthWeight(limit int) int {
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

// Levels is the first n [price, size] pairs as contract levels.
func Levels(in [][2]decimal.Decimal, n int) []contract.Level {
	out := make([]contract.Level, 0, min(len(in), n))
	for _, l := range in {
		if len(out) == n {
			break
		}
		out = append(out, contract.Level{l[0], l[1]})
	}
	return out
}

// FmtDec renders a decimal as fapi takes it: plain, no exponent.
func FmtDec(d decimal.Decimal) string { return d.String() }
