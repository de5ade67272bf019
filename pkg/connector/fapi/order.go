package fapi

import (
	"regexp"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// conditional reports whether an order type waits for a trigger. Only
// Aster places such orders on New Order; Binance's live in its algo
// service.
func conditional(typ string) bool {
	switch typ {
	case "STOP", "STOP_MARKET", "TAKE_PROFIT", "TAKE_PROFIT_MARKET", "TRAILING_STOP_MARKET":
		return true
	}
	return false
}

// OrderStatus is Status with NEW on a conditional type PENDING (Aster
// fact sheet §6).
func OrderStatus(o Order) string {
	if o.Status == "NEW" && conditional(o.Type) {
		return contract.StatusPending
	}
	return Status(o.Status, o.ExecutedQty.IsPositive())
}

// OrderOf maps an order of New Order's kind; a STOP_MARKET or
// TAKE_PROFIT_MARKET shows its stopPrice as price and triggerPrice (Aster
// fact sheet §4 getOrders).
func OrderOf(o Order) contract.Order {
	out := contract.Order{
		ID:            strconv.FormatInt(int64(o.OrderID), 10),
		Market:        o.Symbol,
		Side:          contract.Side(o.Side),
		Type:          o.Type,
		Size:          o.OrigQty,
		Price:         o.Price,
		FilledSize:    o.ExecutedQty,
		Status:        OrderStatus(o),
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

// Position maps a positionRisk row; hedge mode's positionSide names the
// side, one-way mode's BOTH leaves it to the amount's sign.
func Position(p PositionRisk, leverage decimal.Decimal) contract.Position {
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
		Leverage:      leverage,
	}
}

// ClientIDRule is the venues' rule for newClientOrderId (and Binance's
// clientAlgoId); an id it refuses the venue would reject with -4015.
func ClientIDRule(venue string) venuekit.ClientIDRule {
	return venuekit.ClientIDRule{Venue: venue, Pattern: clientIDs, Takes: "1 to 36 characters of letters, digits and . : / _ -"}
}

var clientIDs = regexp.MustCompile(`^[.A-Z:/a-z0-9_-]{1,36}$`)
