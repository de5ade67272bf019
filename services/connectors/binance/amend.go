package binance

import (
	"context"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Amendable implements connector.Amender. Binance's Modify Order (PUT
// /fapi/v1/order) takes LIMIT orders only, price and quantity together;
// conditional orders live in the algo service, which has no modify
// (https://developers.binance.com/docs/derivatives/usds-margined-futures/trade/rest-api/Modify-Order).
func (a *Adapter) Amendable(t connector.OrderType) []string {
	if t == connector.Limit {
		return []string{connector.FieldPrice, connector.FieldSize}
	}
	return nil
}

// ModifyOrder implements connector.Amender.
func (a *Adapter) ModifyOrder(ctx context.Context, c connector.Credential, am connector.Amendment) (contract.Order, error) {
	n, algo, err := parseOrderID(am.OrderID)
	if err != nil {
		return contract.Order{}, err
	}
	if algo {
		return contract.Order{}, contract.Errorf(contract.CodeInvalidRequest,
			"order %s is a Binance conditional order, which Binance cannot amend; cancel it and place a new one", am.OrderID)
	}
	res, err := fapi.Modify(ctx, a.signed, "/fapi/v1/order", c, n, am)
	if err != nil {
		return contract.Order{}, err
	}
	return orderFromWire(res), nil
}

// NativeDeadMan implements connector.DeadManSwitcher: Binance's
// countdownCancelAll is per symbol, so it serves a switch on one market
// (https://developers.binance.com/docs/derivatives/usds-margined-futures/trade/rest-api/Auto-Cancel-All-Open-Orders).
func (a *Adapter) NativeDeadMan(m *connector.Market, _ int) bool { return m != nil }

// SetDeadManSwitch implements connector.DeadManSwitcher: countdownTime in
// milliseconds, 0 cancels the timer.
func (a *Adapter) SetDeadManSwitch(ctx context.Context, c connector.Credential, m *connector.Market, timeoutSeconds int) (time.Time, error) {
	return fapi.Countdown(ctx, a.signed, "/fapi/v1/countdownCancelAll", c, *m, timeoutSeconds, a.c.now())
}
