package aster

import (
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
)

// parseOrderID reads an order id the connector handed out: digits.
func parseOrderID(id string) (int64, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return 0, contract.Errorf(contract.CodeInvalidRequest, "field \"orderId\": %q is not an Aster order id (digits)", id)
	}
	return n, nil
}

// clientIDRule is Aster's rule for newClientOrderId (fact sheet §7).
var clientIDRule = fapi.ClientIDRule("Aster")

// fillFromWire maps a trade; the fee is the absolute commission, whose
// sign is unconfirmed (fact sheet §4 getFills).
func fillFromWire(t fapi.UserTrade) contract.Fill { return fapi.Fill(t, t.Commission.Abs()) }
