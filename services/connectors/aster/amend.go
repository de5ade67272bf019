package aster

import (
	"context"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
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
	res, err := fapi.Modify(ctx, a.signed, "/fapi/v3/order", c, n, am)
	if err != nil {
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
	return fapi.Countdown(ctx, a.signed, "/fapi/v3/countdownCancelAll", c, *m, timeoutSeconds, a.c.now())
}
