package hyperliquid

import (
	"context"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Amendable implements connector.Amender: the modify action sends the
// whole order, so every field of a limit or trigger order can change.
func (a *Adapter) Amendable(t connector.OrderType) []string { return venuekit.EveryField(t) }

// ModifyOrder implements connector.Amender with the modify action
// (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/exchange-endpoint#modify-an-order).
// The order is then read back among the open ones.
func (a *Adapter) ModifyOrder(ctx context.Context, c connector.Credential, am connector.Amendment) (contract.Order, error) {
	acct, err := a.account(c)
	if err != nil {
		return contract.Order{}, err
	}
	oid, err := strconv.ParseUint(am.OrderID, 10, 64)
	if err != nil {
		return contract.Order{}, contract.Errorf(contract.CodeInvalidRequest, "field \"orderId\": %q is not a hyperliquid order id", am.OrderID)
	}
	// The modify sends the whole order: it keeps its time in force and cloid.
	tif, cloid := a.resting(ctx, c, oid)
	after := am.After
	after.PostOnly = tif == "Alo"
	var w OrderWire
	if after.Type == connector.Stop {
		info, err := a.asset(ctx, c, after.Market.Native)
		if err != nil {
			return contract.Order{}, err
		}
		tpsl := "tp"
		if after.StopAgainstSide() {
			tpsl = "sl"
		}
		w, _ = triggerWire(info, after.Side, after.Size, after.TriggerPrice, tpsl, after.ReduceOnly, "")
	} else if w, _, _, err = a.limitWire(ctx, c, after); err != nil {
		return contract.Order{}, err
	}
	w.Cloid = cloid
	if _, err := a.send(ctx, c, acct, ModifyAction{Type: ActionModify, Oid: oid, Order: w}, 1); err != nil {
		return contract.Order{}, err
	}
	open, _ := a.GetOrders(ctx, c, &am.After.Market)
	return am.Amended(open.Orders), nil
}

// resting reads an open order's time in force and cloid ("" when unknown).
func (a *Adapter) resting(ctx context.Context, c connector.Credential, oid uint64) (tif, cloid string) {
	open, err := a.openOrders(ctx, c)
	if err != nil {
		return "", ""
	}
	for _, o := range open {
		if uint64(o.Oid) == oid {
			if o.Tif != nil {
				tif = *o.Tif
			}
			if o.Cloid != nil {
				cloid = *o.Cloid
			}
		}
	}
	return tif, cloid
}

// NativeDeadMan implements connector.DeadManSwitcher: scheduleCancel
// cancels every open order of the account, at a time at least 5 s ahead,
// and fires at most 10 times a day
// (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/exchange-endpoint#schedule-cancel-dead-mans-switch).
func (a *Adapter) NativeDeadMan(m *connector.Market, _ int) bool { return m == nil }

// SetDeadManSwitch implements connector.DeadManSwitcher.
func (a *Adapter) SetDeadManSwitch(ctx context.Context, c connector.Credential, _ *connector.Market, timeoutSeconds int) (time.Time, error) {
	acct, err := a.account(c)
	if err != nil {
		return time.Time{}, err
	}
	action := ScheduleCancelAction{Type: ActionScheduleCancel}
	var at time.Time
	if timeoutSeconds > 0 {
		at = a.now().Add(time.Duration(timeoutSeconds) * time.Second)
		ms := uint64(at.UnixMilli())
		action.Time = &ms
	}
	if _, err := a.send(ctx, c, acct, action, 1); err != nil {
		return time.Time{}, err
	}
	return at, nil
}
