package paradex

import (
	"slices"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/symbol"
	"github.com/shopspring/decimal"
)

// quote is the quote of every Paradex perpetual (settled in USDC).
const quote = "USD"

// parseNative reads a Paradex symbol. Multiplier listings carry a
// lower-case prefix: kPEPE-USD-PERP is 1000 PEPE, mSATS-USD-PERP a
// million SATS (instrument guide); pkg/symbol knows k, m is read here.
func parseNative(native string) (symbol.Symbol, bool) {
	if !strings.HasSuffix(native, "-USD-PERP") {
		return symbol.Symbol{}, false
	}
	base := strings.TrimSuffix(native, "-USD-PERP")
	if len(base) > 1 && base[0] == 'm' && base[1] >= 'A' && base[1] <= 'Z' {
		s, err := symbol.Parse(base[1:] + "-USD-PERP")
		if err != nil || s.Multiplier > 1 {
			return symbol.Symbol{}, false
		}
		s.Multiplier = 1_000_000
		return s, true
	}
	s, err := symbol.Parse(native)
	return s, err == nil
}

// marketFromWire keeps tradable perpetuals (asset_kind PERP; options and
// spot share /markets). Market.Native stays Paradex's own symbol, so
// 1000PEPE-USD-PERP is sent as kPEPE-USD-PERP.
func marketFromWire(r marketResp) (connector.Market, bool) {
	if r.AssetKind != "PERP" {
		return connector.Market{}, false
	}
	sym, ok := parseNative(r.Symbol)
	if !ok {
		return connector.Market{}, false
	}
	m := connector.Market{
		Canonical:   sym.Canonical(quote),
		Native:      r.Symbol,
		Base:        sym.Base,
		Quote:       quote,
		Multiplier:  max(sym.Multiplier, 1),
		TickSize:    r.PriceTickSize.D(),
		LotSize:     r.OrderSizeIncrement.D(),
		MinSize:     r.OrderSizeIncrement.D(),
		MinNotional: r.MinNotional.D(),
		// Reduce-only orders under min_notional are taken only when they
		// close the whole position, so the runtime may not rely on it.
		ReduceOnlyBelowMinNotional: false,
		// Paradex values an order at the mark price
		// (https://docs.paradex.trade/trading/placing-orders).
		MinNotionalAtMark: true,
	}
	if imf := r.Delta1CrossMarginParams.IMFBase.D(); imf.IsPositive() {
		m.MaxLeverage = int(decimal.NewFromInt(1).Div(imf).IntPart())
	}
	if !m.TickSize.IsPositive() || !m.LotSize.IsPositive() {
		return connector.Market{}, false
	}
	return m, true
}

// FundingInterval returns, for a market's funding_rate (the rate of one
// funding period of funding_period_hours, not normalised to 8 h), the
// funding interval in hours and the rate per hour (12 decimals, as the
// contract's Hourly rounds). Paradex funding accrues continuously, so the
// hourly rate is the period's rate spread evenly; the lead wires these
// into fundingIntervalHours and fundingRateHourly at merge.
func FundingInterval(rate, periodHours decimal.Decimal) (intervalHours int, hourly decimal.Decimal) {
	h := int(periodHours.IntPart())
	if h <= 0 {
		h = 8 // the period of every listed market so far
	}
	return h, rate.DivRound(decimal.NewFromInt(int64(h)), 12)
}

// NextFundingTime is the convention for continuous funding: there is no
// discrete payment, so nextFundingTime is the next whole UTC hour (Unix
// seconds), when an hour's accrual is complete.
func NextFundingTime(now time.Time) int64 {
	return now.UTC().Truncate(time.Hour).Add(time.Hour).Unix()
}

// statusFromWire maps an order's status and cancel_reason to ours. NEW
// (accepted, before risk checks) counts as OPEN; a closed order with
// nothing left is FILLED whatever the reason (an IOC remainder). One
// closed with nothing filled is CANCELLED only for a reason that is not a
// refusal (the owner's cancel, an IOC that found nothing): any other
// reason, known (ORDER_SIZE_BELOW_MIN, NOT_ENOUGH_MARGIN, ...) or not, or
// none, is REJECTED, as refused reports it after placing.
func statusFromWire(o orderResp) string {
	switch o.Status {
	case "NEW", "OPEN":
		return contract.StatusOpen
	case "UNTRIGGERED":
		return contract.StatusPending
	case "CLOSED":
		filled := o.Size.D().Sub(o.RemainingSize.D())
		switch {
		case o.CancelReason == "" && o.RemainingSize.D().IsZero():
			return contract.StatusFilled
		case filled.IsPositive() && (!o.RemainingSize.D().IsPositive() || o.CancelReason == "REMAINING_IOC_CANCEL"):
			return contract.StatusFilled
		case filled.IsPositive() || !rejectedReason(o.CancelReason):
			return contract.StatusCancelled
		}
		return contract.StatusRejected
	}
	return o.Status
}

// rejectedReason: an unfilled order closed for any reason but the
// owner's cancel or an IOC's empty remainder was refused by the venue.
func rejectedReason(r string) bool {
	return r != "USER_CANCELED" && r != "REMAINING_IOC_CANCEL"
}

// sides are Paradex's words for the order side.
var sides = venuekit.Sides{Buy: "BUY", Sell: "SELL"}

func sideFromWire(s string) contract.Side { return sides.Side(s) }

func sideToWire(s contract.Side) string { return sides.Wire(s) }

func orderFromWire(o orderResp) contract.Order {
	out := contract.Order{
		ID:            o.ID,
		Market:        o.Market,
		Side:          sideFromWire(o.Side),
		Type:          o.Type,
		Size:          o.Size.D(),
		Price:         o.Price.D(),
		FilledSize:    o.Size.D().Sub(o.RemainingSize.D()),
		Status:        statusFromWire(o),
		CreatedAt:     int64(o.CreatedAt / 1000),
		ReduceOnly:    slices.Contains(o.Flags, "REDUCE_ONLY"),
		ClientOrderID: o.ClientID,
	}
	if out.FilledSize.IsNegative() || !o.RemainingSize.Given {
		out.FilledSize = decimal.Zero
	}
	if t := o.TriggerPrice.D(); t.IsPositive() {
		out.TriggerPrice = &t
		if !out.Price.IsPositive() {
			out.Price = t
		}
	}
	return out
}

func positionFromWire(p positionResp, mark decimal.Decimal) contract.Position {
	side := contract.Long
	if p.Side == "SHORT" || p.Size.D().IsNegative() {
		side = contract.Short
	}
	return contract.Position{
		Market:        p.Market,
		Side:          side,
		Size:          p.Size.D().Abs(),
		EntryPrice:    p.AverageEntryPrice.D(),
		MarkPrice:     mark,
		UnrealizedPnl: p.UnrealizedPnl.D(),
		Leverage:      p.Leverage.D(),
	}
}

func fillFromWire(f fillResp) contract.Fill {
	out := contract.Fill{
		ID:        f.ID,
		OrderID:   f.OrderID,
		Market:    f.Market,
		Side:      sideFromWire(f.Side),
		Size:      f.Size.D(),
		Price:     f.Price.D(),
		Fee:       f.Fee.D(),
		Timestamp: int64(f.CreatedAt / 1000),
	}
	if f.RealizedPnl.Given {
		pnl := f.RealizedPnl.D()
		out.RealizedPnl = &pnl
	}
	return out
}

// resolutions are the kline resolutions Paradex serves, in minutes
// (GET /markets/klines); longer candles are built from 60-minute ones.
var resolutions = map[int]bool{1: true, 3: true, 5: true, 15: true, 30: true, 60: true}

// aggregate builds candles of minutes (a multiple of 60) from hourly
// candles, on UTC boundaries, oldest first; the last may be partial.
var aggregate = venuekit.Aggregate

// fmtDec renders a decimal as Paradex takes it: a plain string.
func fmtDec(d decimal.Decimal) string { return d.String() }
