package okx

import (
	"context"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// amendBody is POST /api/v5/trade/amend-order's body
// (https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-amend-order):
// newSz is the total in contracts, filled part included.
type amendBody struct {
	InstID string `json:"instId"`
	OrdID  string `json:"ordId"`
	NewSz  string `json:"newSz,omitempty"`
	NewPx  string `json:"newPx,omitempty"`
}

// amendAlgoBody is POST /api/v5/trade/amend-algos' body for a trigger
// order
// (https://www.okx.com/docs-v5/en/#order-book-trading-algo-trading-post-amend-algo-order).
type amendAlgoBody struct {
	InstID       string `json:"instId"`
	AlgoID       string `json:"algoId"`
	NewSz        string `json:"newSz,omitempty"`
	NewTriggerPx string `json:"newTriggerPx,omitempty"`
}

// Amendable implements connector.Amender: amend-order changes a pending
// regular order's size and price, amend-algos a stop's (trigger order's)
// size and trigger price.
func (a *Adapter) Amendable(t connector.OrderType) []string {
	if t == connector.Stop {
		return []string{connector.FieldSize, connector.FieldTriggerPrice}
	}
	return []string{connector.FieldPrice, connector.FieldSize}
}

// ModifyOrder implements connector.Amender: amend-order answers ids only,
// so the order is read back among the pending ones.
func (a *Adapter) ModifyOrder(ctx context.Context, c connector.Credential, am connector.Amendment) (contract.Order, error) {
	oid, algo, err := parseOrderID(am.OrderID)
	if err != nil {
		return contract.Order{}, err
	}
	im, err := a.inst(ctx, c, am.After.Market.Native)
	if err != nil {
		return contract.Order{}, err
	}
	newSz := ""
	if am.Changes(connector.FieldSize) {
		sz, err := sized(am.After, im)
		if err != nil {
			return contract.Order{}, err
		}
		newSz = fmtDec(sz)
	}
	inst := am.After.Market.Native
	if algo {
		b := amendAlgoBody{InstID: inst, AlgoID: oid, NewSz: newSz}
		if am.Changes(connector.FieldTriggerPrice) {
			b.NewTriggerPx = fmtDec(am.After.TriggerPrice)
		}
		err = a.post(ctx, c, request{path: "/api/v5/trade/amend-algos", body: b, limit: algoRule, instID: inst}, nil)
	} else {
		b := amendBody{InstID: inst, OrdID: oid, NewSz: newSz}
		if am.Changes(connector.FieldPrice) {
			b.NewPx = fmtDec(am.After.Price)
		}
		err = a.post(ctx, c, request{path: "/api/v5/trade/amend-order", body: b, limit: cancelRule, instID: inst}, nil)
	}
	if err != nil {
		return contract.Order{}, err
	}
	open, _ := a.GetOrders(ctx, c, &am.After.Market)
	return am.Amended(open.Orders), nil
}

// NativeDeadMan implements connector.DeadManSwitcher: OKX's
// cancel-all-after covers every pending order of the account and takes 0
// or 10-120 seconds
// (https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-cancel-all-after).
func (a *Adapter) NativeDeadMan(m *connector.Market, timeoutSeconds int) bool {
	return m == nil && (timeoutSeconds == 0 || timeoutSeconds >= 10 && timeoutSeconds <= 120)
}

// SetDeadManSwitch implements connector.DeadManSwitcher.
func (a *Adapter) SetDeadManSwitch(ctx context.Context, c connector.Credential, _ *connector.Market, timeoutSeconds int) (time.Time, error) {
	var res []struct {
		TriggerTime string `json:"triggerTime"`
	}
	body := map[string]string{"timeOut": strconv.Itoa(timeoutSeconds)}
	if err := a.post(ctx, c, request{path: "/api/v5/trade/cancel-all-after", body: body, limit: rule{n: 2}}, &res); err != nil {
		return time.Time{}, err
	}
	if timeoutSeconds == 0 {
		return time.Time{}, nil
	}
	if len(res) > 0 {
		if ms, err := strconv.ParseInt(res[0].TriggerTime, 10, 64); err == nil && ms > 0 {
			return time.UnixMilli(ms), nil
		}
	}
	return a.c.Now().Add(time.Duration(timeoutSeconds) * time.Second), nil
}
