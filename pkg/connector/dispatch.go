package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// dispatch runs one operation for one credential.
type dispatch struct {
	r    *Runtime
	cred Credential
}

func (d dispatch) market(ctx context.Context, raw string) (Market, error) {
	return d.r.markets.resolve(ctx, d.r.adapter, d.cred, raw)
}

func (d dispatch) optMarket(ctx context.Context, raw string) (*Market, error) {
	if raw == "" {
		return nil, nil
	}
	m, err := d.market(ctx, raw)
	return &m, err
}

// canon maps an adapter's symbol to the canonical one.
func (d dispatch) canon(ctx context.Context, sym string) string {
	s, err := d.r.markets.set(ctx, d.r.adapter, d.cred, false)
	if err != nil {
		return sym
	}
	return s.canonical(sym)
}

func (d dispatch) run(ctx context.Context, op *contract.Operation, params any) (any, error) {
	a, c := d.r.adapter, d.cred
	switch p := params.(type) {
	case *contract.OrderbookParams:
		m, err := d.market(ctx, p.Market)
		if err != nil {
			return nil, err
		}
		return a.GetOrderbook(ctx, c, m, p.Depth)
	case *contract.CandlesParams:
		m, err := d.market(ctx, p.Market)
		if err != nil {
			return nil, err
		}
		interval, err := strconv.Atoi(p.Interval)
		if err != nil {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "field \"interval\" must be minutes as a string")
		}
		return a.GetCandles(ctx, c, m, interval, p.Limit)
	case *contract.FillsParams:
		m, err := d.market(ctx, p.Market)
		if err != nil {
			return nil, err
		}
		res, err := a.GetFills(ctx, c, m, p.Limit)
		for i := range res.Fills {
			res.Fills[i].Market = d.canon(ctx, res.Fills[i].Market)
		}
		return res, err
	case *contract.MarketFilterParams:
		return d.listing(ctx, op, p)
	case *contract.NoParams:
		return d.accountWide(ctx, op)
	case *contract.MarketParams:
		return d.perMarket(ctx, op, p)
	case *contract.LeverageParams:
		m, err := d.market(ctx, p.Market)
		if err != nil {
			return nil, err
		}
		lev, err := a.SetLeverage(ctx, c, m, p.Leverage)
		return contract.LeverageResult{Leverage: lev}, err
	case *contract.CancelOrderParams:
		m, err := d.optMarket(ctx, p.Market)
		if err != nil {
			return nil, err
		}
		return contract.CancelOrderResult{}, a.CancelOrder(ctx, c, p.OrderID, m)
	case *contract.LimitOrderParams:
		return d.placeOne(ctx, OrderRequest{Type: Limit, Side: p.Side, Size: p.Size, Price: p.Price,
			PostOnly: p.PostOnly, ReduceOnly: p.ReduceOnly, ClientOrderID: p.ClientOrderID}, p.Market)
	case *contract.MarketOrderParams:
		return d.placeOne(ctx, OrderRequest{Type: MarketType, Side: p.Side, Size: p.Size,
			ReduceOnly: p.ReduceOnly, ClientOrderID: p.ClientOrderID}, p.Market)
	case *contract.StopOrderParams:
		return d.placeOne(ctx, OrderRequest{Type: Stop, Side: p.Side, Size: p.Size, TriggerPrice: p.TriggerPrice,
			ReduceOnly: p.ReduceOnly, ClientOrderID: p.ClientOrderID}, p.Market)
	case *contract.BatchOrderParams:
		return d.placeBatch(ctx, p)
	case *contract.ProtectionParams:
		return d.placeProtection(ctx, p)
	}
	return nil, fmt.Errorf("operation %s: no dispatch for %T", op.Name, params)
}

func (d dispatch) listing(ctx context.Context, op *contract.Operation, p *contract.MarketFilterParams) (any, error) {
	m, err := d.optMarket(ctx, p.Market)
	if err != nil {
		return nil, err
	}
	switch op.Name {
	case contract.OpGetPositions:
		res, err := d.r.adapter.GetPositions(ctx, d.cred, m)
		for i := range res.Positions {
			res.Positions[i].Market = d.canon(ctx, res.Positions[i].Market)
		}
		if res.Positions == nil {
			res.Positions = []contract.Position{}
		}
		return res, err
	case contract.OpGetOrders:
		res, err := d.r.adapter.GetOrders(ctx, d.cred, m)
		for i := range res.Orders {
			res.Orders[i].Market = d.canon(ctx, res.Orders[i].Market)
		}
		if res.Orders == nil {
			res.Orders = []contract.Order{}
		}
		return res, err
	}
	return nil, fmt.Errorf("operation %s: not a listing", op.Name)
}

func (d dispatch) accountWide(ctx context.Context, op *contract.Operation) (any, error) {
	a, c := d.r.adapter, d.cred
	switch op.Name {
	case contract.OpGetMarketsWithFunding:
		res, err := a.GetMarketsWithFunding(ctx, c)
		for i := range res.Markets {
			res.Markets[i].Symbol = d.canon(ctx, res.Markets[i].Symbol)
		}
		return res, err
	case contract.OpGetBalance:
		res, err := a.GetBalance(ctx, c)
		res.ExchangeType = a.Exchange()
		return res, err
	case contract.OpTestCredentials:
		valid, err := a.TestCredentials(ctx, c)
		return contract.TestCredentialsResult{Valid: valid, Exchange: a.Exchange()}, err
	}
	return nil, fmt.Errorf("operation %s: not account-wide", op.Name)
}

func (d dispatch) perMarket(ctx context.Context, op *contract.Operation, p *contract.MarketParams) (any, error) {
	a, c := d.r.adapter, d.cred
	m, err := d.market(ctx, p.Market)
	if err != nil {
		return nil, err
	}
	switch op.Name {
	case contract.OpGetMarkPrice:
		return a.GetMarkPrice(ctx, c, m)
	case contract.OpGetFundingRate:
		return a.GetFundingRate(ctx, c, m)
	case contract.OpGetFeeInfo:
		return a.GetFeeInfo(ctx, c, m)
	case contract.OpCancelAllOrders:
		n, err := a.CancelAllOrders(ctx, c, m)
		return contract.CancelAllResult{CancelledCount: n}, err
	case contract.OpCloseAllPositions:
		return a.CloseAllPositions(ctx, c, m)
	}
	return nil, fmt.Errorf("operation %s: not per-market", op.Name)
}

// prepare resolves and rounds an order and gives it a client order id.
func (d dispatch) prepare(ctx context.Context, o *OrderRequest, market string) error {
	m, err := d.market(ctx, market)
	if err != nil {
		return err
	}
	o.Market = m
	if o.ClientOrderID == "" {
		o.ClientOrderID = uuid.NewString()
	}
	return roundOrder(o)
}

func (d dispatch) placeOne(ctx context.Context, o OrderRequest, market string) (any, error) {
	if err := d.prepare(ctx, &o, market); err != nil {
		return nil, err
	}
	return d.once(ctx, o.ClientOrderID, func() (any, error) {
		a, c := d.r.adapter, d.cred
		switch o.Type {
		case Limit:
			res, err := a.PlaceLimitOrder(ctx, c, o)
			res.Market, res.ClientOrderID = o.Market.Canonical, o.ClientOrderID
			return res, err
		case MarketType:
			res, err := a.PlaceMarketOrder(ctx, c, o)
			res.Market, res.ClientOrderID = o.Market.Canonical, o.ClientOrderID
			return res, err
		default:
			res, err := a.PlaceStopOrder(ctx, c, o)
			res.ClientOrderID = o.ClientOrderID
			return res, err
		}
	})
}

// once places at most once per (credential, clientOrderId) within
// IdempotencyTTL: a repeat gets the stored result of the first placement.
func (d dispatch) once(ctx context.Context, clientID string, place func() (any, error)) (any, error) {
	key := d.cred.ID + ":" + clientID
	prior, claimed, err := d.claim(ctx, key, clientID)
	if err != nil {
		return nil, err
	}
	if !claimed {
		return json.RawMessage(prior), nil
	}
	res, err := place()
	if err != nil {
		// Nothing was placed (or the venue dedupes by client id): let a retry try again.
		_ = d.r.idem.Release(context.WithoutCancel(ctx), key)
		return nil, err
	}
	body, mErr := json.Marshal(res)
	if mErr != nil {
		return nil, mErr
	}
	if err := d.r.idem.Complete(context.WithoutCancel(ctx), key, body); err != nil {
		d.r.log.Warn("idempotent result not stored", "err", err, "client_order_id", clientID)
	}
	return json.RawMessage(body), nil
}

// claim waits while another replica places the same clientOrderId, so the
// repeat answers with that result instead of placing twice.
func (d dispatch) claim(ctx context.Context, key, clientID string) ([]byte, bool, error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		prior, claimed, err := d.r.idem.Claim(ctx, key)
		if !errors.Is(err, ErrInFlight) {
			if err != nil {
				return nil, false, fmt.Errorf("idempotency claim: %w", err)
			}
			return prior, claimed, nil
		}
		select {
		case <-ctx.Done():
			return nil, false, contract.Errorf(contract.CodeExchangeTimeout,
				"an order with clientOrderId %q is still being placed; its state is unknown, look it up with getOrders", clientID)
		case <-tick.C:
		}
	}
}

func (d dispatch) placeBatch(ctx context.Context, p *contract.BatchOrderParams) (any, error) {
	results := make([]contract.BatchOrderResult, len(p.Orders))
	var todo []OrderRequest
	var todoIdx []int
	var keys []string
	seen := map[string]bool{}
	for i, item := range p.Orders {
		o := OrderRequest{Type: Limit, Side: item.Side, Size: item.Size, Price: item.Price,
			PostOnly: item.PostOnly, ReduceOnly: item.ReduceOnly, ClientOrderID: item.ClientOrderID}
		if err := d.prepare(ctx, &o, item.Market); err != nil {
			ce, _ := contract.AsError(err)
			if ce.Code == contract.CodeInternal || ce.Code == contract.CodeExchangeError {
				return nil, err // the venue is unreachable; nothing placed
			}
			results[i] = contract.BatchOrderResult{Status: contract.StatusRejected, ClientOrderID: o.ClientOrderID, Error: ce}
			continue
		}
		if seen[o.ClientOrderID] {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "orders[%d].clientOrderId %q repeats an earlier order of the batch", i, o.ClientOrderID)
		}
		seen[o.ClientOrderID] = true
		key := d.cred.ID + ":" + o.ClientOrderID
		prior, claimed, err := d.claim(ctx, key, o.ClientOrderID)
		if err != nil {
			d.releaseAll(ctx, keys)
			return nil, err
		}
		if !claimed {
			var r contract.BatchOrderResult
			if json.Unmarshal(prior, &r) != nil {
				var lr contract.LimitOrderResult
				_ = json.Unmarshal(prior, &lr)
				r = contract.BatchOrderResult{OrderID: lr.OrderID, Status: lr.Status, ClientOrderID: o.ClientOrderID}
			}
			results[i] = r
			continue
		}
		todo, todoIdx, keys = append(todo, o), append(todoIdx, i), append(keys, key)
	}
	if len(todo) > 0 {
		placed, err := d.r.adapter.PlaceBatchOrder(ctx, d.cred, todo)
		if err != nil || len(placed) != len(todo) {
			d.releaseAll(ctx, keys)
			if err == nil {
				err = fmt.Errorf("adapter returned %d batch results for %d orders", len(placed), len(todo))
			}
			return nil, err
		}
		for j, res := range placed {
			res.ClientOrderID = todo[j].ClientOrderID
			results[todoIdx[j]] = res
			if res.Status == contract.StatusRejected {
				_ = d.r.idem.Release(context.WithoutCancel(ctx), keys[j])
				continue
			}
			body, _ := json.Marshal(res)
			_ = d.r.idem.Complete(context.WithoutCancel(ctx), keys[j], body)
		}
	}
	return contract.BatchResult{Results: results}, nil
}

func (d dispatch) releaseAll(ctx context.Context, keys []string) {
	for _, k := range keys {
		_ = d.r.idem.Release(context.WithoutCancel(ctx), k)
	}
}

var hundred = decimal.NewFromInt(100)

func (d dispatch) placeProtection(ctx context.Context, p *contract.ProtectionParams) (any, error) {
	m, err := d.market(ctx, p.Market)
	if err != nil {
		return nil, err
	}
	req := ProtectionRequest{Market: m, PositionSide: p.Side, Size: floorStep(p.Size, m.LotSize), ClientOrderID: p.ClientOrderID}
	if !req.Size.IsPositive() {
		return nil, contract.Errorf(contract.CodeInvalidRequest, "size rounds to zero on %s: the lot step is %s", m.Canonical, m.LotSize)
	}
	if req.ClientOrderID == "" {
		req.ClientOrderID = uuid.NewString()[:32] // room for the -tp/-sl suffix within 36 characters
	}
	if len(req.ClientOrderID) > 33 {
		return nil, contract.Errorf(contract.CodeInvalidRequest, "clientOrderId of protection orders takes at most 33 characters (legs add -tp and -sl)")
	}
	sign := decimal.NewFromInt(1)
	if p.Side == contract.Short {
		sign = sign.Neg()
	}
	if p.TPPercent.IsPositive() {
		tp := nearestStep(p.EntryPrice.Mul(hundred.Add(sign.Mul(p.TPPercent))).Div(hundred), m.TickSize)
		req.TakeProfit = &tp
	}
	if p.SLPercent.IsPositive() {
		sl := nearestStep(p.EntryPrice.Mul(hundred.Sub(sign.Mul(p.SLPercent))).Div(hundred), m.TickSize)
		if !sl.IsPositive() {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "slPercent puts the stop at or below zero")
		}
		req.StopLoss = &sl
	}
	return d.once(ctx, req.ClientOrderID, func() (any, error) {
		return d.r.adapter.PlaceProtectionOrders(ctx, d.cred, req)
	})
}
