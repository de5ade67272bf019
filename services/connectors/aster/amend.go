package aster

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Amendable implements connector.Amender. Aster's Modify Order (PUT
// /fapi/v3/order) takes LIMIT orders only, price and quantity together
// (fact sheet §5).
func (a *Adapter) Amendable(t connector.OrderType) []string {
	if t == connector.Limit {
		return []string{connector.FieldPrice, connector.FieldSize}
	}
	return nil
}

// ModifyOrder implements connector.Amender.
func (a *Adapter) ModifyOrder(ctx context.Context, c connector.Credential, am connector.Amendment) (contract.Order, error) {
	n, err := parseOrderID(am.OrderID)
	if err != nil {
		return contract.Order{}, err
	}
	p := symbolParam(am.After.Market).Add("orderId", strconv.FormatInt(n, 10)).Add("side", string(am.After.Side)).
		Add("quantity", fmtDec(am.After.Size)).Add("price", fmtDec(am.After.Price))
	var res order
	if err := a.signed(ctx, c, http.MethodPut, "/fapi/v3/order", p, 1, &res); err != nil {
		return contract.Order{}, err
	}
	return orderFromWire(res), nil
}

// NativeDeadMan implements connector.DeadManSwitcher: Aster's
// countdownCancelAll is per symbol, so it serves a switch on one market
// (fact sheet §5).
func (a *Adapter) NativeDeadMan(m *connector.Market, _ int) bool { return m != nil }

// SetDeadManSwitch implements connector.DeadManSwitcher: countdownTime in
// milliseconds, 0 cancels the timer.
func (a *Adapter) SetDeadManSwitch(ctx context.Context, c connector.Credential, m *connector.Market, timeoutSeconds int) (time.Time, error) {
	p := symbolParam(*m).Add("countdownTime", strconv.Itoa(timeoutSeconds*1000))
	if err := a.signed(ctx, c, http.MethodPost, "/fapi/v3/countdownCancelAll", p, 10, nil); err != nil {
		return time.Time{}, err
	}
	if timeoutSeconds == 0 {
		return time.Time{}, nil
	}
	return a.c.now().Add(time.Duration(timeoutSeconds) * time.Second), nil
}
