package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/appendlog"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/health"
	"github.com/shopspring/decimal"
)

// dispatch runs one operation for one credential.
type dispatch struct {
	r      *Runtime
	cred   Credential
	keyID  string           // the calling key, for its daily notional
	guards *contract.Guards // the calling key's trading guards; nil when none
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
		return d.orderbook(ctx, m, p.Depth)
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
		if err := d.allowMarket(m); err != nil {
			return nil, err
		}
		lev, err := a.SetLeverage(ctx, c, m, p.Leverage)
		d.r.leverageSet(c.ID, m)
		return contract.LeverageResult{Leverage: lev}, err
	case *contract.CancelOrderParams:
		m, err := d.optMarket(ctx, p.Market)
		if err != nil {
			return nil, err
		}
		if err := d.allowCancel(ctx, p.OrderID, m); err != nil {
			return nil, err
		}
		return contract.CancelOrderResult{}, a.CancelOrder(ctx, c, p.OrderID, m)
	case *contract.LimitOrderParams:
		if tp, sl := p.Attached(); tp != nil || sl != nil {
			return d.placeEntry(ctx, OrderRequest{Type: Limit, Side: p.Side, Size: p.Size, Price: p.Price,
				PostOnly: p.PostOnly, ClientOrderID: p.ClientOrderID}, p.Market, p.DryRun, tp, sl)
		}
		return d.placeOne(ctx, OrderRequest{Type: Limit, Side: p.Side, Size: p.Size, Price: p.Price,
			PostOnly: p.PostOnly, ReduceOnly: p.ReduceOnly, ClientOrderID: p.ClientOrderID}, p.Market, p.DryRun)
	case *contract.MarketOrderParams:
		if tp, sl := p.Attached(); tp != nil || sl != nil {
			return d.placeEntry(ctx, OrderRequest{Type: MarketType, Side: p.Side, Size: p.Size,
				ClientOrderID: p.ClientOrderID}, p.Market, p.DryRun, tp, sl)
		}
		return d.placeOne(ctx, OrderRequest{Type: MarketType, Side: p.Side, Size: p.Size,
			ReduceOnly: p.ReduceOnly, ClientOrderID: p.ClientOrderID}, p.Market, p.DryRun)
	case *contract.StopOrderParams:
		return d.placeOne(ctx, OrderRequest{Type: Stop, Side: p.Side, Size: p.Size, TriggerPrice: p.TriggerPrice,
			ReduceOnly: p.ReduceOnly, ClientOrderID: p.ClientOrderID}, p.Market, p.DryRun)
	case *contract.BatchOrderParams:
		return d.placeBatch(ctx, p)
	case *contract.ProtectionParams:
		return d.placeProtection(ctx, p)
	case *contract.FundingPaymentsParams:
		return d.fundingPayments(ctx, p)
	case *contract.ModifyOrderParams:
		return d.modifyOrder(ctx, p)
	case *contract.DeadManSwitchParams:
		return d.setDeadManSwitch(ctx, p)
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
		res, err := d.marketsWithFunding(ctx)
		for i := range res.Markets {
			res.Markets[i].Symbol = d.canon(ctx, res.Markets[i].Symbol)
			res.Markets[i].Hourly()
		}
		return res, err
	case contract.OpGetBalance:
		res, err := a.GetBalance(ctx, c)
		res.ExchangeType = a.Exchange()
		return res, err
	case contract.OpTestCredentials:
		valid, err := a.TestCredentials(ctx, c)
		return testCredentialsResult(a.Exchange(), valid, err)
	}
	return nil, fmt.Errorf("operation %s: not account-wide", op.Name)
}

func (d dispatch) perMarket(ctx context.Context, op *contract.Operation, p *contract.MarketParams) (any, error) {
	a, c := d.r.adapter, d.cred
	m, err := d.market(ctx, p.Market)
	if err != nil {
		return nil, err
	}
	if !op.ReadOnly {
		if err := d.allowMarket(m); err != nil {
			return nil, err
		}
	}
	switch op.Name {
	case contract.OpGetMarkPrice:
		return d.markPrice(ctx, m)
	case contract.OpGetFundingRate:
		res, err := d.fundingRate(ctx, m)
		res.Hourly()
		return res, err
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

// prepare resolves and rounds an order and gives it a client order id; a
// market outside the key's allowedMarkets is refused before the venue's
// rules are applied.
func (d dispatch) prepare(ctx context.Context, o *OrderRequest, market string) error {
	m, err := d.market(ctx, market)
	if err != nil {
		return err
	}
	if err := d.allowMarket(m); err != nil {
		return err
	}
	o.Market = m
	if o.ClientOrderID == "" {
		o.ClientOrderID = uuid.NewString()
	}
	if err := roundOrder(o); err != nil {
		return err
	}
	return d.minNotionalAtMark(ctx, *o)
}

func (d dispatch) placeOne(ctx context.Context, o OrderRequest, market string, dryRun bool) (any, error) {
	if err := d.prepare(ctx, &o, market); err != nil {
		return nil, err
	}
	if err := d.markStop(ctx, &o); err != nil {
		return nil, err
	}
	p, err := d.judge(ctx, o, dryRun)
	if err != nil {
		return nil, err
	}
	if dryRun {
		if err := d.checkExposure(ctx, p, decimal.Zero); err != nil {
			return nil, err
		}
		if err := d.peekDaily(ctx, p, decimal.Zero); err != nil {
			return nil, err
		}
		return contract.DryRunResult{DryRun: true, DryRunOrder: dryRunOrder(p)}, nil
	}
	a, c := d.r.adapter, d.cred
	place := func(ctx context.Context) (res any, err error) {
		if err := d.attachIntent(ctx, o); err != nil {
			return nil, err
		}
		defer func() { d.attachFailed(ctx, o, err) }()
		switch o.Type {
		case Limit:
			res, err := a.PlaceLimitOrder(ctx, c, o)
			res.Market, res.ClientOrderID, res.Protection = o.Market.Canonical, o.ClientOrderID, d.r.attachedResult(o)
			return res, err
		case MarketType:
			res, err := a.PlaceMarketOrder(ctx, c, o)
			res.Market, res.ClientOrderID = o.Market.Canonical, o.ClientOrderID
			if err == nil {
				res.Protection = d.r.protectNow(ctx, c, o)
			}
			return res, err
		default:
			res, err := a.PlaceStopOrder(ctx, c, o)
			res.ClientOrderID = o.ClientOrderID
			return res, err
		}
	}
	find := func(ctx context.Context) (any, bool, error) {
		f, found, err := a.FindOrder(ctx, c, o.Market, o.ClientOrderID)
		if err != nil || !found {
			return nil, false, err
		}
		res, err := foundResult(o, f)
		if err != nil {
			return nil, false, err
		}
		return withProtection(res, d.r.attachedResult(o)), true, nil
	}
	return d.once(ctx, o.ClientOrderID, orderFingerprint(o), d.withCaps(p, place), find, eventResult(o, d.r.attachedResult(o)), true)
}

// once places at most once per (credential, clientOrderId) within
// IdempotencyTTL: a repeat gets the stored result of the first placement,
// a repeat with other parameters IDEMPOTENCY_CONFLICT. A placement whose
// outcome is unknown (timeout, upstream 5xx, a connector that died) is
// looked up at the venue with find before the client is told or anything
// is placed again, and settled in the background (fromEvent: from an
// order event; nil: it is not). carried: place makes one order, which a
// ClaimCarrier's venue records with the claim.
func (d dispatch) once(ctx context.Context, clientID string, fp map[string]string,
	place func(context.Context) (any, error), find func(context.Context) (any, bool, error),
	fromEvent func(contract.OrderEvent) (any, bool, error), carried bool) (any, error) {
	key := d.cred.ID + ":" + clientID
	pending := func(errs ...error) {
		d.r.unsettled.add(&pendingPlacement{key: key, credID: d.cred.ID, clientID: clientID, orderID: unsettledOrderID(errs...),
			fp: fp, fromEvent: fromEvent, find: find, since: d.r.cfg.Now()})
	}
	// A venue in this process may defer its own durable write to the
	// barrier: complete then waits for it and for the result at once. One
	// that carries claims records the claim with the order, so the claim
	// need not be durable before the venue is called (the store holds it).
	ctx, barrier := appendlog.WithBarrier(ctx)
	if cc, ok := d.r.adapter.(ClaimCarrier); ok && cc.CarriesClaims() && carried {
		barrier.AllowHold()
	}
	rec, err := d.claim(ctx, key, clientID, fp, find, pending)
	if err != nil || rec.Result != nil {
		return rec.Result, err
	}
	pctx, cancel := context.WithTimeout(ctx, time.Until(deadlineOf(ctx))-reconcileReserve(ctx, time.Now()))
	res, err := place(pctx)
	cancel()
	if err == nil && !barrier.Taken() {
		// The venue did not record the claim: it must be durable before
		// the order is, so before the venue's deferred write.
		if herr := barrier.WaitHeld(); herr != nil {
			d.r.log.Error("placement claim not stored", "err", herr, "client_order_id", clientID)
		}
	}
	if err != nil {
		// What a failed placement changed at the venue is as durable as
		// it would have been had the venue waited itself, and the claim
		// stands on its own (a release or a pending look-up follows).
		_ = appendlog.Together(barrier.Wait, barrier.WaitHeld)
	}
	if err != nil && Ambiguous(err) {
		fctx, cancel := context.WithDeadline(ctx, deadlineOf(ctx).Add(-answerMargin))
		found, ok, ferr := find(fctx)
		cancel()
		switch {
		case ferr == nil && ok:
			d.r.log.Info("placement reconciled after an ambiguous failure", "client_order_id", clientID, "err", err)
			res, err = found, nil
		case errors.Is(ferr, errVenueRejected):
			err = contract.Upstream(contract.ReasonInvalidOrder, "", "",
				"the exchange rejected the order with clientOrderId %s", clientID)
		default:
			// Not found yet, or the look-up failed: the claim stays, and once
			// its deadline passes a retry looks the order up instead of
			// placing a second one.
			pending(ferr, err)
			if u, ok := unsettledOutcome(clientID, ferr, err); ok {
				return nil, u
			}
			return nil, unknownOutcome(clientID, err)
		}
	}
	if err != nil {
		_ = d.r.idem.Release(context.WithoutCancel(ctx), key) // nothing was placed
		return nil, err
	}
	return d.complete(ctx, key, clientID, fp, res)
}

// complete stores a placement's result and returns it as raw JSON, once
// the result and whatever the venue deferred to ctx's barrier are durable.
func (d dispatch) complete(ctx context.Context, key, clientID string, fp map[string]string, res any) (any, error) {
	body, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	d.r.unsettled.drop(key)
	err = d.r.idem.Complete(context.WithoutCancel(ctx), key, Record{Result: body, Fingerprint: fp})
	if berr := appendlog.BarrierFrom(ctx).Wait(); berr != nil {
		d.r.log.Error("the venue could not make a placement durable", "err", berr, "client_order_id", clientID)
		return nil, unknownOutcome(clientID, contract.Errorf(contract.CodeExchangeUnavailable,
			"the exchange took the order but could not record it durably"))
	}
	if err != nil {
		d.r.log.Warn("idempotent result not stored", "err", err, "client_order_id", clientID)
	}
	return json.RawMessage(body), nil
}

// unknownOutcome keeps an ambiguous failure's code but says that the
// order's state is unknown and how to find out.
func unknownOutcome(clientID string, err error) error {
	ce, ok := contract.AsError(err)
	if !ok || errors.Is(err, context.DeadlineExceeded) {
		ce = contract.Errorf(contract.CodeExchangeTimeout, "the exchange did not answer in time")
	}
	out := *ce
	out.Message = fmt.Sprintf("%s; the order's state is unknown and it was not found at the exchange yet: "+
		"repeat the call with clientOrderId %s (it will not place twice) or look it up with getOrders", ce.Message, clientID)
	return &out
}

func deadlineOf(ctx context.Context) time.Time {
	if dl, ok := ctx.Deadline(); ok {
		return dl
	}
	return time.Now().Add(10 * time.Second)
}

// claim returns an empty record when this request may place (it holds the
// claim), or the record that answers it: a stored result, or the result
// of a stale claim resolved at the venue. It waits while another request
// places the same clientOrderId within its deadline.
func (d dispatch) claim(ctx context.Context, key, clientID string, fp map[string]string,
	find func(context.Context) (any, bool, error), pending func(...error)) (Record, error) {
	mine := Record{Fingerprint: fp, Deadline: deadlineOf(ctx)}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		existing, claimed, err := d.r.idem.Claim(ctx, key, mine)
		if err != nil {
			return Record{}, d.storeDown(err)
		}
		if claimed {
			return Record{}, nil
		}
		if err := conflict(clientID, existing.Fingerprint, fp); err != nil {
			return Record{}, err
		}
		if !existing.Pending() {
			return existing, nil
		}
		if existing.Stale(time.Now()) {
			res, found, err := find(ctx)
			switch {
			case errors.Is(err, errVenueRejected):
				// The earlier order was refused: nothing stands, place anew.
			case err != nil && !Ambiguous(err):
				return Record{}, err
			case err != nil:
				pending(err)
				if u, ok := unsettledOutcome(clientID, err); ok {
					return Record{}, u
				}
				return Record{}, unknownOutcome(clientID, err)
			case found:
				d.r.log.Info("stale placement resolved at the exchange", "client_order_id", clientID)
				out, err := d.complete(ctx, key, clientID, existing.Fingerprint, res)
				if err != nil {
					return Record{}, err
				}
				return Record{Result: out.(json.RawMessage)}, nil
			}
			// The venue does not know it: the earlier request placed nothing.
			if err := d.r.idem.TakeOver(ctx, key, existing, mine); err == nil {
				d.r.unsettled.drop(key)
				return Record{}, nil
			} else if !errors.Is(err, ErrClaimLost) {
				return Record{}, d.storeDown(err)
			}
			continue
		}
		select {
		case <-ctx.Done():
			return Record{}, contract.Errorf(contract.CodeExchangeTimeout,
				"an order with clientOrderId %q is still being placed; its state is unknown, look it up with getOrders", clientID)
		case <-tick.C:
		}
	}
}

// storeDown is SERVICE_UNAVAILABLE for an idempotency store that cannot be
// reached: without it a retry could place twice, so nothing is placed.
func (d dispatch) storeDown(err error) error {
	msg := "the gateway cannot record placements (its idempotency store is unreachable), so nothing was placed; retry shortly"
	if refused := (errStoreRefused{}); errors.As(err, &refused) {
		msg = "placements are refused, nothing was placed: " + refused.Error()
	} else if path, full := health.DiskFullPath(err); full {
		d.r.log.Error("disk full: placements cannot be recorded", "path", path, "err", err)
		msg = "the disk holding " + path + " is full, so the placement could not be recorded and nothing was placed: free space on it"
	} else {
		d.r.log.Warn("idempotency store unavailable", "err", err)
	}
	ce := contract.Errorf(contract.CodeServiceUnavailable, "%s", msg)
	ce.RetryAfterSeconds = 2
	return ce
}

// batchOrder is one order of placeBatchOrder as the adapter gets it.
func batchOrder(item contract.BatchOrder) OrderRequest {
	return OrderRequest{Type: Limit, Side: item.Side, Size: item.Size, Price: item.Price,
		PostOnly: item.PostOnly, ReduceOnly: item.ReduceOnly, ClientOrderID: item.ClientOrderID}
}

// refusedAlone reports whether a batch order's error refuses that order
// only; other errors (venue unreachable, a fault) stop the whole batch.
func refusedAlone(err error) (*contract.Error, bool) {
	ce, _ := contract.AsError(err)
	return ce, ce.Code != contract.CodeInternal && ce.Code != contract.CodeExchangeError && ce.Code != contract.CodeServiceUnavailable
}

func (d dispatch) placeBatch(ctx context.Context, p *contract.BatchOrderParams) (any, error) {
	if p.DryRun {
		return d.dryRunBatch(ctx, p)
	}
	results := make([]contract.BatchOrderResult, len(p.Orders))
	var todo []OrderRequest
	var todoIdx []int
	var keys []string
	var uncount []func()
	undo := func() {
		d.releaseAll(ctx, keys)
		for _, f := range uncount {
			f()
		}
	}
	seen := map[string]bool{}
	pending := map[string]decimal.Decimal{} // what the orders to send add, per market and side
	for i, item := range p.Orders {
		o := batchOrder(item)
		err := d.prepare(ctx, &o, item.Market)
		var pr priced
		if err == nil {
			pr, err = d.judge(ctx, o, false)
		}
		if err != nil {
			ce, alone := refusedAlone(err)
			if !alone {
				undo()
				return nil, err // the venue is unreachable; nothing placed
			}
			results[i] = contract.BatchOrderResult{Status: contract.StatusRejected, ClientOrderID: o.ClientOrderID, Error: ce}
			continue
		}
		if seen[o.ClientOrderID] {
			undo()
			return nil, contract.Errorf(contract.CodeInvalidRequest, "orders[%d].clientOrderId %q repeats an earlier order of the batch", i, o.ClientOrderID)
		}
		seen[o.ClientOrderID] = true
		key := d.cred.ID + ":" + o.ClientOrderID
		rec, err := d.claim(ctx, key, o.ClientOrderID, orderFingerprint(o), d.findBatchOrder(o), func(...error) {})
		if ce, ok := contract.AsError(err); err != nil && ok && ce.Code == contract.CodeIdempotencyConflict {
			results[i] = contract.BatchOrderResult{Status: contract.StatusRejected, ClientOrderID: o.ClientOrderID, Error: ce}
			continue
		}
		if err != nil {
			undo()
			return nil, err
		}
		if rec.Result != nil {
			results[i] = batchResultOf(rec.Result, o.ClientOrderID)
			continue
		}
		err = d.checkExposure(ctx, pr, pending[exposureKey(o)])
		var release func()
		if err == nil {
			release, err = d.reserveDaily(ctx, pr)
		}
		if err != nil {
			_ = d.r.idem.Release(context.WithoutCancel(ctx), key)
			if ce, alone := refusedAlone(err); alone {
				results[i] = contract.BatchOrderResult{Status: contract.StatusRejected, ClientOrderID: o.ClientOrderID, Error: ce}
				continue
			}
			undo()
			return nil, err
		}
		if !o.ReduceOnly {
			pending[exposureKey(o)] = pending[exposureKey(o)].Add(pr.notional)
		}
		todo, todoIdx, keys, uncount = append(todo, o), append(todoIdx, i), append(keys, key), append(uncount, release)
	}
	if len(todo) == 0 {
		return contract.BatchResult{Results: results}, nil
	}
	pctx, cancel := context.WithTimeout(ctx, time.Until(deadlineOf(ctx))-reconcileReserve(ctx, time.Now()))
	placed, err := d.r.adapter.PlaceBatchOrder(pctx, d.cred, todo)
	cancel()
	if err == nil && len(placed) != len(todo) {
		err = fmt.Errorf("adapter returned %d batch results for %d orders", len(placed), len(todo))
	}
	if err != nil && !Ambiguous(err) {
		undo()
		return nil, err
	}
	if err != nil { // the whole call may or may not have reached the venue
		ce, _ := contract.AsError(err)
		placed = make([]contract.BatchOrderResult, len(todo))
		for j := range placed {
			placed[j] = contract.BatchOrderResult{Status: contract.StatusUnknown, Error: ce}
		}
	}
	rctx, cancelR := context.WithDeadline(ctx, deadlineOf(ctx).Add(-answerMargin))
	defer cancelR()
	for j, res := range placed {
		o := todo[j]
		res.ClientOrderID = o.ClientOrderID
		if res.Status == contract.StatusRejected && res.Error != nil && Ambiguous(res.Error) {
			res.Status = contract.StatusUnknown // a 5xx or timeout for this order: it may stand
		}
		if res.Status == contract.StatusUnknown {
			res = d.reconcileBatchOrder(rctx, o, res)
		}
		results[todoIdx[j]] = res
		switch res.Status {
		case contract.StatusRejected:
			_ = d.r.idem.Release(context.WithoutCancel(ctx), keys[j])
			uncount[j]()
		case contract.StatusUnknown: // the claim stays until its deadline; a retry looks it up
		default:
			body, _ := json.Marshal(res)
			_ = d.r.idem.Complete(context.WithoutCancel(ctx), keys[j], Record{Result: body, Fingerprint: orderFingerprint(o)})
		}
	}
	return contract.BatchResult{Results: results}, nil
}

// dryRunBatch judges a batch order by order, in request order, as a real
// batch would, and places nothing: the daily cap counts the orders before
// it that would be sent.
func (d dispatch) dryRunBatch(ctx context.Context, p *contract.BatchOrderParams) (any, error) {
	out := contract.DryRunBatchResult{DryRun: true, Results: make([]contract.DryRunBatchEntry, len(p.Orders))}
	var sum decimal.Decimal
	pending := map[string]decimal.Decimal{}
	for i, item := range p.Orders {
		o := batchOrder(item)
		err := d.prepare(ctx, &o, item.Market)
		var pr priced
		if err == nil {
			pr, err = d.judge(ctx, o, true)
		}
		if err == nil {
			err = d.checkExposure(ctx, pr, pending[exposureKey(o)])
		}
		if err == nil {
			err = d.peekDaily(ctx, pr, sum)
		}
		if err != nil {
			ce, alone := refusedAlone(err)
			if !alone {
				return nil, err
			}
			out.Results[i] = contract.DryRunBatchEntry{Status: contract.StatusRejected, ClientOrderID: o.ClientOrderID, Error: ce}
			continue
		}
		sum = sum.Add(pr.notional)
		if !o.ReduceOnly {
			pending[exposureKey(o)] = pending[exposureKey(o)].Add(pr.notional)
		}
		ord := dryRunOrder(pr)
		out.Results[i] = contract.DryRunBatchEntry{Status: contract.StatusDryRun, DryRunOrder: &ord, ClientOrderID: o.ClientOrderID}
	}
	return out, nil
}

// findBatchOrder looks one order of a batch up at the venue.
func (d dispatch) findBatchOrder(o OrderRequest) func(context.Context) (any, bool, error) {
	return func(ctx context.Context) (any, bool, error) {
		f, found, err := d.r.adapter.FindOrder(ctx, d.cred, o.Market, o.ClientOrderID)
		if err != nil || !found {
			return nil, false, err
		}
		return contract.BatchOrderResult{OrderID: f.ID, Status: f.Status, ClientOrderID: o.ClientOrderID}, true, nil
	}
}

// reconcileBatchOrder replaces an UNKNOWN batch result with the order's
// state at the venue when the venue knows it.
func (d dispatch) reconcileBatchOrder(ctx context.Context, o OrderRequest, res contract.BatchOrderResult) contract.BatchOrderResult {
	found, ok, err := d.findBatchOrder(o)(ctx)
	if err != nil || !ok {
		if res.Error == nil {
			res.Error = contract.Errorf(contract.CodeExchangeTimeout, "the exchange did not answer in time")
		}
		e := *res.Error
		e.Message += "; the order's state is unknown: repeat it with the same clientOrderId or look it up with getOrders"
		res.Error = &e
		return res
	}
	return found.(contract.BatchOrderResult)
}

// batchResultOf reads a stored result as a batch entry; it may be the
// result of a single placement with the same clientOrderId.
func batchResultOf(stored json.RawMessage, clientID string) contract.BatchOrderResult {
	var r contract.BatchOrderResult
	if json.Unmarshal(stored, &r) == nil && r.Status != "" {
		return r
	}
	var lr contract.LimitOrderResult
	_ = json.Unmarshal(stored, &lr)
	return contract.BatchOrderResult{OrderID: lr.OrderID, Status: lr.Status, ClientOrderID: clientID}
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
	if err := d.allowMarket(m); err != nil {
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
		if !tp.IsPositive() {
			return nil, contract.Errorf(contract.CodeInvalidRequest,
				"tpPercent puts the take-profit of a SHORT at or below zero: it must be below 100 (a price can fall at most 100 %%)")
		}
		req.TakeProfit = &tp
	}
	if p.SLPercent.IsPositive() {
		sl := nearestStep(p.EntryPrice.Mul(hundred.Sub(sign.Mul(p.SLPercent))).Div(hundred), m.TickSize)
		if !sl.IsPositive() {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "slPercent puts the stop at or below zero")
		}
		req.StopLoss = &sl
	}
	if p.DryRun {
		return d.dryRunProtection(ctx, req)
	}
	place := func(ctx context.Context) (any, error) {
		res, err := d.r.adapter.PlaceProtectionOrders(ctx, d.cred, req)
		if err == nil {
			d.r.watchProtection(ctx, d.cred, m, req.ClientOrderID, res)
		}
		return res, err
	}
	find := func(ctx context.Context) (any, bool, error) { return d.r.findPair(ctx, d.cred, m, req) }
	return d.once(ctx, req.ClientOrderID, protectionFingerprint(req), place, find, nil, false)
}
