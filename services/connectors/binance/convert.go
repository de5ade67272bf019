package binance

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// quote is the only quote asset the connector lists: USDT-margined
// perpetuals.
const quote = "USDT"

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

// clientIDRule is Binance's rule for newClientOrderId and clientAlgoId
// (fact sheet §7); an id it refuses Binance would reject with -4015.
var clientIDRule = venuekit.ClientIDRule{Venue: "Binance", Pattern: regexp.MustCompile(`^[.A-Z:/a-z0-9_-]{1,36}$`),
	Takes: "1 to 36 characters of letters, digits and . : / _ -"}

// checkClientID refuses an id Binance would reject, before anything is sent.
func checkClientID(id string) error { return clientIDRule.Check(id) }

// The conversions Binance shares with Aster (package fapi).
var (
	statusFromWire = fapi.Status
	candleFromWire = fapi.Candle
	intervals      = fapi.Intervals
	depthLimit     = fapi.DepthLimit
	depthWeight    = fapi.DepthWeight
	fmtDec         = fapi.FmtDec
	weightLimit    = fapi.WeightLimit
)

// marketsFromInfo is the tradable USDT perpetuals of exchangeInfo.
func marketsFromInfo(info exchangeInfo) ([]connector.Market, map[string]symbolMeta) {
	return fapi.Markets(info, quote)
}

func fillFromWire(t userTrade) contract.Fill { return fapi.Fill(t, t.Commission) }
