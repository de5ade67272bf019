package bybit

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// settle is the only settle coin the connector lists: USDT perpetuals
// (category linear also holds USDC perpetuals and dated futures).
const settle = "USDT"

// category is the v5 product category of every request.
const category = "linear"

// symbolMeta is what the adapter keeps about a symbol beyond
// connector.Market: the largest market order, and the funding interval.
type symbolMeta struct {
	maxMarketQty   decimal.Decimal
	fundingMinutes int
}

// marketsFromInstruments keeps the tradable USDT perpetuals
// (contractType LinearPerpetual, settleCoin USDT, status Trading).
func marketsFromInstruments(list []instrument) ([]connector.Market, map[string]symbolMeta) {
	var out []connector.Market
	meta := map[string]symbolMeta{}
	for _, s := range list {
		if s.ContractType != "LinearPerpetual" || s.SettleCoin != settle || s.Status != "Trading" {
			continue
		}
		m, ok := venuekit.NewMarket(s.Symbol, settle)
		if !ok {
			continue
		}
		m.TickSize, m.LotSize = s.PriceFilter.TickSize.D(), s.LotSizeFilter.QtyStep.D()
		m.MinSize, m.MinNotional = s.LotSizeFilter.MinOrderQty.D(), s.LotSizeFilter.MinNotionalValue.D()
		// ReduceOnlyBelowMinNotional stays false: the instrument page
		// states no exemption from minNotionalValue for reduce-only.
		m.MaxLeverage = int(s.LeverageFilter.MaxLeverage.D().IntPart())
		if !m.TickSize.IsPositive() || !m.LotSize.IsPositive() {
			continue
		}
		out = append(out, m)
		meta[s.Symbol] = symbolMeta{maxMarketQty: s.LotSizeFilter.MaxMktOrderQty.D(), fundingMinutes: s.FundingInterval}
	}
	return out, meta
}

// statusFromWire maps orderStatus (enum page) to the contract's. A partly
// filled order still rests, so it is OPEN; filledSize shows the progress.
// Triggered is the moment a conditional order turns into an active one.
func statusFromWire(s string) string {
	switch s {
	case "New", "PartiallyFilled", "Triggered", "Created":
		return contract.StatusOpen
	case "Untriggered":
		return contract.StatusPending
	case "Filled":
		return contract.StatusFilled
	case "Cancelled", "Deactivated", "PartiallyFilledCanceled":
		return contract.StatusCancelled
	case "Rejected":
		return contract.StatusRejected
	}
	return s
}

// postOnlyTaken is the rejectReason of a post-only order Bybit accepted
// and then cancelled because it would have taken liquidity.
const postOnlyTaken = "EC_PostOnlyWillTakeLiquidity"

// venueCancelled reports an order Bybit accepted and then cancelled with
// nothing filled for a reason of its own (rejectReason, e.g.
// EC_PostOnlyWillTakeLiquidity, EC_NoImmediateQtyToFill, or one not known:
// https://bybit-exchange.github.io/docs/v5/enum#rejectreason): a
// rejection, as the placement's read-back reports it. EC_NoError and
// EC_PerCancelRequest are the owner's cancel.
func venueCancelled(o order) bool {
	if o.OrderStatus != "Cancelled" || o.CumExecQty.D().IsPositive() {
		return false
	}
	switch o.RejectReason {
	case "", "EC_NoError", "EC_PerCancelRequest", "EC_CancelReplaceOrder":
		return false
	}
	return true
}

func orderType(o order) string {
	switch {
	case !o.TriggerPrice.D().IsPositive():
		return strings.ToUpper(o.OrderType)
	case o.OrderType == "Limit":
		return "STOP_LIMIT"
	case o.StopOrderType == "TakeProfit" || o.StopOrderType == "PartialTakeProfit" || strings.HasSuffix(o.OrderLinkID, "-tp"):
		return "TAKE_PROFIT_MARKET"
	}
	return "STOP_MARKET"
}

func orderFromWire(o order) contract.Order {
	out := contract.Order{
		ID:            o.OrderID,
		Market:        o.Symbol,
		Side:          sideFromWire(o.Side),
		Type:          orderType(o),
		Size:          o.Qty.D(),
		Price:         o.Price.D(),
		FilledSize:    o.CumExecQty.D(),
		Status:        statusFromWire(o.OrderStatus),
		CreatedAt:     msToSeconds(o.CreatedTime),
		ReduceOnly:    o.ReduceOnly,
		ClientOrderID: o.OrderLinkID,
	}
	if t := o.TriggerPrice.D(); t.IsPositive() {
		out.TriggerPrice = &t
		if !out.Price.IsPositive() {
			out.Price = t
		}
	}
	return out
}

// fee is the USDT part of cumFeeDetail, a linear order's fee by coin
// (cumExecFee is deprecated for linear: open-order page). A fee paid in
// another coin (the page's example shows MNT) is not a USDT amount.
func fee(o order) decimal.Decimal {
	return o.CumFeeDetail[settle].D()
}

// sides are Bybit's words for the order side.
var sides = venuekit.Sides{Buy: "Buy", Sell: "Sell"}

func sideFromWire(s string) contract.Side { return sides.Side(s) }

func sideToWire(s contract.Side) string { return sides.Wire(s) }

func positionFromWire(p position) contract.Position {
	side := contract.Long
	if p.Side == "Sell" {
		side = contract.Short
	}
	return contract.Position{
		Market:        p.Symbol,
		Side:          side,
		Size:          p.Size.D().Abs(),
		EntryPrice:    p.AvgPrice.D(),
		MarkPrice:     p.MarkPrice.D(),
		UnrealizedPnl: p.UnrealisedPnl.D(),
		Leverage:      p.Leverage.D(),
	}
}

func fillFromWire(e execution) contract.Fill {
	return contract.Fill{
		ID:        e.ExecID,
		OrderID:   e.OrderID,
		Market:    e.Symbol,
		Side:      sideFromWire(e.Side),
		Size:      e.ExecQty.D(),
		Price:     e.ExecPrice.D(),
		Fee:       e.ExecFee.D(),
		Timestamp: msToSeconds(e.ExecTime),
	}
}

// candleFromWire reads one kline row: [start ms, open, high, low, close,
// volume, turnover].
func candleFromWire(row []string) (contract.Candle, bool) {
	if len(row) < 6 {
		return contract.Candle{}, false
	}
	ms, err := strconv.ParseInt(row[0], 10, 64)
	if err != nil {
		return contract.Candle{}, false
	}
	var vals [5]decimal.Decimal
	for i := range vals {
		if vals[i], err = decimal.NewFromString(row[i+1]); err != nil {
			return contract.Candle{}, false
		}
	}
	return contract.Candle{Time: ms / 1000, Open: vals[0], High: vals[1], Low: vals[2], Close: vals[3], Volume: vals[4]}, true
}

// intervals maps candle minutes to kline intervals (market/kline: D for a day).
var intervals = map[int]string{1: "1", 5: "5", 15: "15", 60: "60", 240: "240", 1440: "D"}

func levels(in [][2]dec, n int) []contract.Level { return venuekit.Levels(in, n) }

func msToSeconds(ms connector.Int) int64 { return int64(ms) / 1000 }

// clientIDRule is Bybit's rule for orderLinkId (create-order page: at
// most 36 characters; letters, digits, - and _).
var clientIDRule = venuekit.ClientIDRule{Venue: "Bybit", Pattern: regexp.MustCompile(`^[A-Za-z0-9_-]{1,36}$`),
	Takes: "1 to 36 characters of letters, digits, - and _"}

// checkClientID refuses an id Bybit would reject, before anything is sent.
func checkClientID(id string) error { return clientIDRule.Check(id) }

// fmtDec renders a decimal as Bybit takes it: a plain string, no exponent.
func fmtDec(d decimal.Decimal) string { return d.String() }

// bps converts a fee rate (0.0002) to basis points (2).
func bps(rate decimal.Decimal) decimal.Decimal { return venuekit.Bps(rate) }
