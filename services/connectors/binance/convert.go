package binance

import (
	"strconv"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// algoStatusFromWire maps an algo order's status. Binance's values (the
// official SDK's ALGO_UPDATE model): NEW waits for its trigger; TRIGGERING
// and TRIGGERED mean it fired and its order is on its way to, or in, the
// matching engine; FINISHED that order is done; EXPIRED is a cancel by the
// system.
func algoStatusFromWire(s string) string {
	if st, ok := algoStatuses[s]; ok {
		return st
	}
	return s
}

var algoStatuses = map[string]string{"NEW": contract.StatusPending, "TRIGGERING": contract.StatusOpen, "TRIGGERED": contract.StatusOpen,
	"CANCELED": contract.StatusCancelled, "EXPIRED": contract.StatusCancelled, "FINISHED": contract.StatusFilled, "REJECTED": contract.StatusRejected}

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

// clientIDRule is Binance's rule for newClientOrderId and clientAlgoId
// (fact sheet §7).
var clientIDRule = fapi.ClientIDRule("Binance")

// amendID reads the id of an order Modify Order takes: conditional orders
// live in the algo service, which has no modify
// (https://developers.binance.com/docs/derivatives/usds-margined-futures/trade/rest-api/Modify-Order).
func amendID(id string) (int64, error) {
	n, algo, err := parseOrderID(id)
	if err == nil && algo {
		err = contract.Errorf(contract.CodeInvalidRequest,
			"order %s is a Binance conditional order, which Binance cannot amend; cancel it and place a new one", id)
	}
	return n, err
}

func fillFromWire(t fapi.UserTrade) contract.Fill { return fapi.Fill(t, t.Commission) }
