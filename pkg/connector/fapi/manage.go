package fapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// OpenOrders is Current Open Orders, of one market or (m nil, weight 40)
// all of them.
func (p *Placer) OpenOrders(ctx context.Context, c connector.Credential, m *connector.Market) ([]Order, error) {
	var q connector.Query
	weight := 40
	if m != nil {
		q, weight = SymbolParam(*m), 1
	}
	var open []Order
	err := p.Signed(ctx, c, http.MethodGet, p.Prefix+"/openOrders", q, weight, &open)
	return open, err
}

// GetOrders implements connector.Adapter where openOrders lists regular
// and conditional orders alike.
func (p *Placer) GetOrders(ctx context.Context, c connector.Credential, m *connector.Market) (contract.OrdersResult, error) {
	open, err := p.OpenOrders(ctx, c, m)
	if err != nil {
		return contract.OrdersResult{}, err
	}
	return contract.OrdersResult{Orders: Orders(open, 0)}, nil
}

// Orders maps open orders, with room for more.
func Orders(open []Order, more int) []contract.Order {
	out := make([]contract.Order, 0, len(open)+more)
	for _, o := range open {
		out = append(out, OrderOf(o))
	}
	return out
}

// CancelRegular cancels order n of New Order. It needs its symbol (orderId
// is unique per symbol only); without a market the open orders are
// searched for it.
func (p *Placer) CancelRegular(ctx context.Context, c connector.Credential, n int64, m *connector.Market) error {
	sym := ""
	if m != nil {
		sym = m.Native
	} else {
		open, err := p.OpenOrders(ctx, c, nil)
		if err != nil {
			return err
		}
		for _, o := range open {
			if int64(o.OrderID) == n {
				sym = o.Symbol
			}
		}
		if sym == "" {
			return contract.Upstream(contract.ReasonOrderNotFound, "", "",
				"no open %s order %d; give market to cancel it by symbol", p.Errors.Venue, n)
		}
	}
	return p.Signed(ctx, c, http.MethodDelete, p.Prefix+"/order",
		connector.Query{}.Add("symbol", sym).Add("orderId", strconv.FormatInt(n, 10)), 1, nil)
}

// CancelAllOrders implements connector.Adapter where one cancel-all
// covers every kind of order. It returns no count: the open orders are
// counted first.
func (p *Placer) CancelAllOrders(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	open, err := p.OpenOrders(ctx, c, &m)
	if err != nil {
		return 0, err
	}
	if err := p.Signed(ctx, c, http.MethodDelete, p.Prefix+"/allOpenOrders", SymbolParam(m), 1, nil); err != nil {
		return 0, err
	}
	return len(open), nil
}

// FindOrder implements connector.Adapter: Query Order by
// origClientOrderId, then FindOther; -2013 means the venue does not know
// the id.
func (p *Placer) FindOrder(ctx context.Context, c connector.Credential, m connector.Market, clientOrderID string) (connector.FoundOrder, bool, error) {
	if err := p.CheckID(clientOrderID); err != nil {
		return connector.FoundOrder{}, false, nil // never sent: the venue would have refused it
	}
	var o Order
	err := p.Signed(ctx, c, http.MethodGet, p.Prefix+"/order", SymbolParam(m).Add("origClientOrderId", clientOrderID), 1, &o)
	if IsCode(err, -2013) {
		if p.FindOther != nil {
			return p.FindOther(ctx, c, clientOrderID)
		}
		return connector.FoundOrder{}, false, nil
	}
	if err != nil {
		return connector.FoundOrder{}, false, err
	}
	found := connector.FoundOrder{Order: OrderOf(o), AvgPrice: o.AvgPrice, Fee: decimal.Zero}
	if o.ExecutedQty.IsPositive() {
		if f, ferr := p.FillOf(ctx, c, m, o); ferr == nil {
			found.AvgPrice, found.Fee = connector.OrDefault(f.Price(m), o.AvgPrice), f.Fee
		}
	}
	return found, true, nil
}

// Amendable implements connector.Amender: Modify Order (PUT order) takes
// LIMIT orders only, price and quantity together.
func (p *Placer) Amendable(t connector.OrderType) []string {
	if t == connector.Limit {
		return []string{connector.FieldPrice, connector.FieldSize}
	}
	return nil
}

// ModifyOrder implements connector.Amender with Modify Order: side,
// quantity and price together.
func (p *Placer) ModifyOrder(ctx context.Context, c connector.Credential, am connector.Amendment) (contract.Order, error) {
	n, err := p.AmendID(am.OrderID)
	if err != nil {
		return contract.Order{}, err
	}
	q := connector.Query{}.Add("symbol", am.After.Market.Native).Add("orderId", strconv.FormatInt(n, 10)).Add("side", string(am.After.Side)).
		Add("quantity", FmtDec(am.After.Size)).Add("price", FmtDec(am.After.Price))
	var res Order
	if err := p.Signed(ctx, c, http.MethodPut, p.Prefix+"/order", q, 1, &res); err != nil {
		return contract.Order{}, err
	}
	return OrderOf(res), nil
}

// NativeDeadMan implements connector.DeadManSwitcher: countdownCancelAll
// is per symbol, so it serves a switch on one market.
func (p *Placer) NativeDeadMan(m *connector.Market, _ int) bool { return m != nil }

// SetDeadManSwitch implements connector.DeadManSwitcher with Auto-Cancel
// All Open Orders (POST countdownCancelAll): countdownTime in
// milliseconds, 0 cancels the timer. The deadline is now plus the
// timeout, zero when off.
func (p *Placer) SetDeadManSwitch(ctx context.Context, c connector.Credential, m *connector.Market, timeoutSeconds int) (time.Time, error) {
	q := SymbolParam(*m).Add("countdownTime", strconv.Itoa(timeoutSeconds*1000))
	if err := p.Signed(ctx, c, http.MethodPost, p.Prefix+"/countdownCancelAll", q, 10, nil); err != nil {
		return time.Time{}, err
	}
	if timeoutSeconds == 0 {
		return time.Time{}, nil
	}
	return p.Now().Add(time.Duration(timeoutSeconds) * time.Second), nil
}

// PlaceBatchOrder implements connector.Adapter with POST batchOrders,
// BatchSize orders a call, each placed on its own (PlaceBatch).
func (p *Placer) PlaceBatchOrder(ctx context.Context, c connector.Credential, orders []connector.OrderRequest) ([]contract.BatchOrderResult, error) {
	return p.Errors.PlaceBatch(ctx, p.Signed, p.Prefix+"/batchOrders", c, orders,
		func(o connector.OrderRequest) error { return p.CheckID(o.ClientOrderID) },
		func() error { return p.OneWay(ctx, c) })
}

// Capabilities is what both venues declare (batchOrders takes 5;
// STOP_MARKET/TAKE_PROFIT_MARKET on MARK_PRICE; countdownCancelAll per
// symbol; Modify Order amends price and quantity); they differ in how far
// back trades reach and in open interest.
func Capabilities(fillsDays int, openInterest bool) connector.Capabilities {
	return connector.Capabilities{
		Operations: connector.Supports([]string{contract.OpPlaceProtectionOrders, contract.OpCloseAllPositions}),
		Features: contract.Features{
			MaxBatchSize: BatchSize, LinkedProtection: false, TriggerPriceType: "mark", MinNotionalPrice: "limit",
			FundingIntervalHours: 8, Amendable: []string{"price", "size"}, DeadManSwitch: contract.Native,
			FillsHistoryDays: fillsDays, OpenInterest: openInterest,
		},
	}
}
