package aster

import (
	"regexp"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// quote is the only quote asset the connector lists: USDT-margined
// perpetuals.
const quote = "USDT"

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

// clientIDRule is Aster's rule for newClientOrderId (fact sheet §7); an
// id it refuses Aster would reject with -4015.
var clientIDRule = venuekit.ClientIDRule{Venue: "Aster", Pattern: regexp.MustCompile(`^[.A-Z:/a-z0-9_-]{1,36}$`),
	Takes: "1 to 36 characters of letters, digits and . : / _ -"}

// checkClientID refuses an id Aster would reject, before anything is sent.
func checkClientID(id string) error { return clientIDRule.Check(id) }

// fillFromWire maps a trade; the fee is the absolute commission, whose
// sign is unconfirmed (fact sheet §4 getFills).
func fillFromWire(t userTrade) contract.Fill { return fapi.Fill(t, t.Commission.Abs()) }

// statusFromWire and fmtDec are fapi's.
var (
	statusFromWire = fapi.Status
	fmtDec         = fapi.FmtDec
)
