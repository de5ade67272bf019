package binance

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
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
		m, ok := venuekit.NewMarket(s.Symbol, quote)
		if !ok {
			continue
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

// statusFromWire maps Binance's order status to the contract's (fact
// sheet §6). A partly filled order still rests, so it is OPEN; its
// filledSize shows the progress.
//
// EXPIRED and EXPIRED_IN_MATCH are Binance ending the order itself (an IOC
// or post-only that could not stand, self-trade prevention): with nothing
// filled a refusal, REJECTED, as is a status not on Binance's list
// (https://developers.binance.com/docs/derivatives/usds-margined-futures/common-definition,
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

// algoStatusFromWire maps an algo order's status. Binance's values (the
// official SDK's ALGO_UPDATE model): NEW waits for its trigger; TRIGGERING
// and TRIGGERED mean it fired and its order is on its way to, or in, the
// matching engine; FINISHED that order is done; EXPIRED is a cancel by the
// system.
func algoStatusFromWire(s string) string {
	switch s {
	case "NEW":
		return contract.StatusPending
	case "TRIGGERING", "TRIGGERED":
		return contract.StatusOpen
	case "CANCELED", "EXPIRED":
		return contract.StatusCancelled
	case "FINISHED":
		return contract.StatusFilled
	case "REJECTED":
		return contract.StatusRejected
	}
	return s
}

// algoPrefix marks order ids of the algo service, whose algoId space is
// separate from orderId (fact sheet §4 cancelOrder).
const algoPrefix = "algo-"

func algoOrderID(id int64) string { return algoPrefix + strconv.FormatInt(id, 10) }

// parseOrderID reads an id the connector handed out: digits for a regular
// order, algo-<digits> for a conditional one.
func parseOrderID(id string) (n int64, algo bool, err error) {
	digits, algo := strings.CutPrefix(id, algoPrefix)
	n, perr := strconv.ParseInt(digits, 10, 64)
	if perr != nil || n <= 0 {
		return 0, false, contract.Errorf(contract.CodeInvalidRequest,
			"field \"orderId\": %q is not a Binance order id (digits, or algo-<digits> for stop and protection orders)", id)
	}
	return n, algo, nil
}

func orderFromWire(o order) contract.Order {
	return contract.Order{
		ID:            strconv.FormatInt(int64(o.OrderID), 10),
		Market:        o.Symbol,
		Side:          contract.Side(o.Side),
		Type:          o.Type,
		Size:          o.OrigQty,
		Price:         o.Price,
		FilledSize:    o.ExecutedQty,
		Status:        statusFromWire(o.Status, o.ExecutedQty.IsPositive()),
		CreatedAt:     int64(o.Time / 1000),
		ReduceOnly:    o.ReduceOnly,
		ClientOrderID: o.ClientOrderID,
	}
}

func algoFromWire(a algoOrder) contract.Order {
	trigger := a.TriggerPrice
	price := a.TriggerPrice
	if a.Price.IsPositive() { // STOP / TAKE_PROFIT limit variants
		price = a.Price
	}
	return contract.Order{
		ID:            algoOrderID(int64(a.AlgoID)),
		Market:        a.Symbol,
		Side:          contract.Side(a.Side),
		Type:          a.OrderType,
		Size:          a.Quantity,
		Price:         price,
		FilledSize:    decimal.Zero,
		Status:        algoStatusFromWire(a.AlgoStatus),
		CreatedAt:     int64(a.CreateTime / 1000),
		TriggerPrice:  &trigger,
		ReduceOnly:    a.ReduceOnly,
		ClientOrderID: a.ClientAlgoID,
	}
}

func positionFromWire(p positionRisk, leverage int) contract.Position {
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
		Leverage:      decimal.NewFromInt(int64(leverage)),
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
		Fee:       t.Commission,
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

// intervals maps candle minutes to Binance's kline intervals.
var intervals = map[int]string{1: "1m", 5: "5m", 15: "15m", 60: "1h", 240: "4h", 1440: "1d"}

// depthLimits are the book sizes /fapi/v1/depth accepts (fact sheet §0 #8).
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

// clientIDRule is Binance's rule for newClientOrderId and clientAlgoId
// (fact sheet §7); an id it refuses Binance would reject with -4015.
var clientIDRule = venuekit.ClientIDRule{Venue: "Binance", Pattern: regexp.MustCompile(`^[.A-Z:/a-z0-9_-]{1,36}$`),
	Takes: "1 to 36 characters of letters, digits and . : / _ -"}

// checkClientID refuses an id Binance would reject, before anything is sent.
func checkClientID(id string) error { return clientIDRule.Check(id) }

// fmtDec renders a decimal as Binance takes it: plain, no exponent.
func fmtDec(d decimal.Decimal) string { return d.String() }

// bps converts a fee rate (0.0002) to basis points (2).
func bps(rate decimal.Decimal) decimal.Decimal { return venuekit.Bps(rate) }
