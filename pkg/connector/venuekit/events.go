package venuekit

import (
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// OrderEvent is the account event of an order as the venue's REST answer
// reads it; the venue adds what its push says beyond that (price,
// average price, reason).
func OrderEvent(o contract.Order) contract.OrderEvent {
	return contract.OrderEvent{OrderID: o.ID, ClientOrderID: o.ClientOrderID, Market: o.Market, Side: o.Side, Type: o.Type,
		Size: o.Size, TriggerPrice: o.TriggerPrice, FilledSize: o.FilledSize, Status: o.Status, ReduceOnly: o.ReduceOnly}
}

// FillEvent is the account event of a fill as the venue's REST answer
// reads it, with the fee's asset and MAKER or TAKER.
func FillEvent(f contract.Fill, feeAsset, liquidity string) contract.FillEvent {
	return contract.FillEvent{FillID: f.ID, OrderID: f.OrderID, Market: f.Market, Side: f.Side, Size: f.Size, Price: f.Price,
		Fee: f.Fee, FeeAsset: feeAsset, Liquidity: liquidity, RealizedPnl: f.RealizedPnl, Timestamp: f.Timestamp}
}

// PositionEvent is the account event of an open position; its leverage
// only when positive.
func PositionEvent(p contract.Position, unrealized, liquidation *decimal.Decimal) contract.PositionEvent {
	return contract.PositionEvent{Market: p.Market, Side: p.Side, Size: p.Size, EntryPrice: p.EntryPrice, UnrealizedPnl: unrealized,
		Leverage: Positive(p.Leverage), LiquidationPrice: liquidation}
}

// FlatEvent is the account event of a position that closed.
func FlatEvent(market string) contract.PositionEvent {
	return contract.PositionEvent{Market: market, Side: contract.PositionFlat, Size: decimal.Zero, EntryPrice: decimal.Zero}
}

// Positive is d, or nil when it is not above zero (a venue's 0 for
// "none").
func Positive(d decimal.Decimal) *decimal.Decimal {
	if !d.IsPositive() {
		return nil
	}
	return &d
}

// Given is d, or nil when the venue left it out.
func Given(d connector.Decimal) *decimal.Decimal {
	if !d.Given {
		return nil
	}
	v := d.D()
	return &v
}

// OptDecimal is s as a decimal, or nil when the venue gave none (empty or
// not a number).
func OptDecimal(s string) *decimal.Decimal {
	d, err := decimal.NewFromString(strings.TrimSpace(s))
	if err != nil {
		return nil
	}
	return &d
}
