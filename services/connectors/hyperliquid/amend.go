package hyperliquid

import (
	"context"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Amendable implements connector.Amender: the modify action sends the
// whole order, so every field of a limit or trigger order can change.
func (a *Adapter) Amendable(t connector.OrderType) []string {
	if t == connector.Stop {
		return []string{connector.FieldSize, connector.FieldTriggerPrice}
	}
	return []string{connector.FieldPrice, connector.FieldSize}
}

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
	var w OrderWire
	if am.After.Type == connector.Stop {
		info, err := a.asset(ctx, c, am.After.Market.Native)
		if err != nil {
			return contract.Order{}, err
		}
		tpsl := "tp"
		if am.After.StopAgainstSide() {
			tpsl = "sl"
		}
		w, _ = triggerWire(info, am.After.Side, am.After.Size, am.After.TriggerPrice, tpsl, am.After.ReduceOnly, "")
	} else if w, _, _, err = a.limitWire(ctx, c, am.After); err != nil {
		return contract.Order{}, err
	}
	w.Cloid = ""
	if am.Before.ClientOrderID != "" {
		w.Cloid = Cloid(c.ID, am.Before.ClientOrderID) // the order keeps its client id
	}
	if _, err := a.send(ctx, c, acct, ModifyAction{Type: ActionModify, Oid: oid, Order: w}, 1); err != nil {
		return contract.Order{}, err
	}
	open, _ := a.GetOrders(ctx, c, &am.After.Market)
	return am.Amended(open.Orders), nil
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
