package connector

import (
	"context"
	"slices"
	"strings"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// The key guards that need a venue's view (DESIGN §12, §13): allowedMarkets
// on the resolved market (for cancelOrder, the order's own market), the
// notional caps on the rounded order at the highest price it can trade at,
// and maxLeverage and maxPositionNotional against the credential's
// leverage and position. The edge checks readOnly, and maxLeverage on
// setLeverage, itself.

// allowMarket refuses a trading call on a market outside the key's
// allowedMarkets.
func (d dispatch) allowMarket(m Market) error {
	if d.guards == nil || d.guards.AllowsMarket(m.Canonical) {
		return nil
	}
	return contract.Errorf(contract.CodeMarketNotAllowed,
		"market %s is not in this key's allowedMarkets (%s)", m.Canonical, strings.Join(d.guards.AllowedMarkets, ", "))
}

// allowCancel applies allowedMarkets to cancelOrder: the order's own
// market is judged, looked up among the credential's open orders, so an
// allowed market named beside another market's orderId does not pass.
func (d dispatch) allowCancel(ctx context.Context, orderID string, named *Market) error {
	if d.guards == nil || len(d.guards.AllowedMarkets) == 0 {
		return nil
	}
	if named != nil {
		if err := d.allowMarket(*named); err != nil {
			return err
		}
	}
	open, err := d.r.adapter.GetOrders(ctx, d.cred, nil)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(open.Orders, func(o contract.Order) bool { return o.ID == orderID })
	if i < 0 {
		return contract.Upstream(contract.ReasonOrderNotFound, "", "",
			"order %s is not among this credential's open orders, so this key (limited to allowedMarkets %s) cannot cancel it",
			orderID, strings.Join(d.guards.AllowedMarkets, ", "))
	}
	market := d.canon(ctx, open.Orders[i].Market)
	if !d.guards.AllowsMarket(market) {
		return contract.Errorf(contract.CodeMarketNotAllowed,
			"order %s is on %s, which is not in this key's allowedMarkets (%s)", orderID, market, strings.Join(d.guards.AllowedMarkets, ", "))
	}
	return nil
}

// needsNotional reports whether an order's notional must be known: for a
// cap or to show it in a dry run.
func (d dispatch) needsNotional(dryRun bool) bool {
	g := d.guards
	return dryRun || g != nil && (g.MaxOrderNotional != nil || g.MaxDailyNotional != nil || g.MaxPositionNotional != nil)
}

// priced is an order with the price its notional is taken at.
type priced struct {
	OrderRequest
	price    decimal.Decimal
	notional decimal.Decimal
}

// judge values one prepared order and checks it against maxOrderNotional
// (prepare has checked its market; the daily and position caps need the
// idempotency claim first).
func (d dispatch) judge(ctx context.Context, o OrderRequest, dryRun bool) (priced, error) {
	p := priced{OrderRequest: o}
	if !d.needsNotional(dryRun) {
		return p, nil
	}
	price, err := d.guardPrice(ctx, o)
	if err != nil {
		return p, err
	}
	p.price, p.notional = price, o.Size.Mul(price)
	if d.guards != nil && d.guards.MaxOrderNotional != nil && p.notional.GreaterThan(*d.guards.MaxOrderNotional) {
		return p, contract.Errorf(contract.CodeOrderNotionalExceeded,
			"order notional %s (size %s × %s, the highest price this order can trade at) is above this key's maxOrderNotional of %s %s",
			p.notional, o.Size, p.price, d.guards.MaxOrderNotional, o.Market.Quote)
	}
	return p, nil
}

// guardPrice is the price guards value o at (DESIGN §13 "Guard pricing").
func (d dispatch) guardPrice(ctx context.Context, o OrderRequest) (decimal.Decimal, error) {
	own := o.Price
	if o.Type == Stop {
		own = o.TriggerPrice
	}
	if o.Type == Limit && o.Side == contract.Buy {
		return own, nil
	}
	mark := o.Mark // a stop's, read once to judge its direction
	if !mark.IsPositive() {
		var err error
		if mark, err = d.guardMark(ctx, o.Market); err != nil {
			return decimal.Zero, err
		}
	}
	return worstPrice(o.Type != Limit, own, mark, d.r.cfg.Guards.MarketSlippageBps), nil
}

var tenThousand = decimal.NewFromInt(10_000)

// worstPrice is the highest price an order other than a BUY limit can
// trade at: its own price (limit or trigger; zero for a market order) or
// the mark, whichever is higher, and for an order that executes at market
// that price moved up by the slippage allowance.
func worstPrice(atMarket bool, own, mark, slippageBps decimal.Decimal) decimal.Decimal {
	p := decimal.Max(own, mark)
	if atMarket {
		p = p.Mul(tenThousand.Add(slippageBps)).Div(tenThousand)
	}
	return p
}

// guardMark is the mark price guards value orders at. Without one no
// order is valued at its own price: the call is refused.
func (d dispatch) guardMark(ctx context.Context, m Market) (decimal.Decimal, error) {
	res, err := d.markPrice(ctx, m)
	if err == nil && res.MarkPrice.IsPositive() {
		return res.MarkPrice, nil
	}
	if err != nil {
		d.r.log.Warn("no mark price to value an order for the key's guards", "market", m.Canonical, "err", err)
	}
	ce := contract.Errorf(contract.CodeServiceUnavailable,
		"the market data of %s has no mark price right now, and this key's guards value the order at the mark; nothing was placed, retry shortly",
		m.Canonical)
	ce.RetryAfterSeconds = 2
	return decimal.Zero, ce
}

// dailyScope is the ledger entry of an order: per credential and id, so a
// retry of the same clientOrderId counts once.
func (d dispatch) ledgerID(clientID string) string { return d.cred.ID + ":" + clientID }

// reserveDaily counts an order against maxDailyNotional before it is sent.
// release undoes it when the order was certainly not placed.
func (d dispatch) reserveDaily(ctx context.Context, p priced) (release func(), err error) {
	if d.guards == nil || d.guards.MaxDailyNotional == nil {
		return func() {}, nil
	}
	if err := ledgerRange(p); err != nil {
		return nil, err
	}
	day, id, limit := ledgerDay(d.r.cfg.Now()), d.ledgerID(p.ClientOrderID), d.dailyLimit()
	total, ok, err := d.r.ledger.Reserve(ctx, d.keyID, day, id, p.notional, limit)
	if err != nil {
		return nil, d.ledgerDown(err)
	}
	if !ok {
		return nil, dailyExceeded(p, total, limit)
	}
	return func() { _ = d.r.ledger.Release(context.WithoutCancel(ctx), d.keyID, day, id) }, nil
}

// peekDaily is reserveDaily for a dry run: it judges without counting.
// pending is what orders ahead of p in the same dry run would add.
func (d dispatch) peekDaily(ctx context.Context, p priced, pending decimal.Decimal) error {
	if d.guards == nil || d.guards.MaxDailyNotional == nil {
		return nil
	}
	used, err := d.r.ledger.Used(ctx, d.keyID, ledgerDay(d.r.cfg.Now()))
	if err != nil {
		return d.ledgerDown(err)
	}
	if err := ledgerRange(p); err != nil {
		return err
	}
	used = used.Add(pending)
	if limit := d.dailyLimit(); used.Add(p.notional).GreaterThan(limit) {
		return dailyExceeded(p, used, limit)
	}
	return nil
}

// dailyLimit is the key's maxDailyNotional within what the ledger counts.
func (d dispatch) dailyLimit() decimal.Decimal {
	return decimal.Min(*d.guards.MaxDailyNotional, MaxLedgerNotional)
}

// ledgerRange refuses an order the daily ledger cannot count.
func ledgerRange(p priced) error {
	if p.notional.GreaterThan(MaxLedgerNotional) {
		return contract.Errorf(contract.CodeDailyNotionalExceeded,
			"order notional %s is above %s, the most the gateway counts against maxDailyNotional in a day; place smaller orders",
			p.notional, MaxLedgerNotional)
	}
	return nil
}

func dailyExceeded(p priced, used, limit decimal.Decimal) error {
	what := "this key's maxDailyNotional of " + limit.String()
	if limit.Equal(MaxLedgerNotional) {
		what = limit.String() + ", the most the gateway counts against maxDailyNotional in a day"
	}
	return contract.Errorf(contract.CodeDailyNotionalExceeded,
		"order notional %s would take today's total (UTC) from %s to %s, above %s",
		p.notional, used, used.Add(p.notional), what)
}

func (d dispatch) ledgerDown(err error) error {
	d.r.log.Warn("notional ledger unavailable", "err", err)
	ce := contract.Errorf(contract.CodeServiceUnavailable,
		"the gateway cannot count this key's daily notional (its store is unreachable), so nothing was placed; retry shortly")
	ce.RetryAfterSeconds = 2
	return ce
}

// withCaps wraps a placement so it is judged on exposure and counted
// against the daily cap first, and uncounted when the venue certainly did
// not take it.
func (d dispatch) withCaps(p priced, place func(context.Context) (any, error)) func(context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		if err := d.checkExposure(ctx, p, decimal.Zero); err != nil {
			return nil, err
		}
		release, err := d.reserveDaily(ctx, p)
		if err != nil {
			return nil, err
		}
		res, err := place(ctx)
		if err != nil && !Ambiguous(err) {
			release()
		}
		return res, err
	}
}

// dryRunOrder describes what would be sent for p.
func dryRunOrder(p priced) contract.DryRunOrder {
	price := p.price
	if p.Type == Limit {
		price = p.Price // what is sent; the notional may be at the mark
	}
	out := contract.DryRunOrder{
		Market: p.Market.Canonical, VenueSymbol: p.Market.Native, Type: string(p.Type), Side: p.Side,
		Size: p.Size, Price: price, Notional: p.notional, PostOnly: p.PostOnly, ReduceOnly: p.ReduceOnly,
		ClientOrderID: p.ClientOrderID,
	}
	if p.Type == Stop {
		t := p.TriggerPrice
		out.TriggerPrice = &t
	}
	return out
}

// dryRunProtection describes the legs a protection request would place:
// reduce-only market orders on the opposite side, triggered on mark price,
// each valued as a stop (DESIGN §13).
func (d dispatch) dryRunProtection(ctx context.Context, req ProtectionRequest) (contract.DryRunProtectionResult, error) {
	side := contract.Sell
	if req.PositionSide == contract.Short {
		side = contract.Buy
	}
	mark, err := d.guardMark(ctx, req.Market)
	if err != nil {
		return contract.DryRunProtectionResult{}, err
	}
	leg := func(kind, sfx string, trigger *decimal.Decimal) *contract.DryRunOrder {
		if trigger == nil {
			return nil
		}
		t := *trigger
		price := worstPrice(true, t, mark, d.r.cfg.Guards.MarketSlippageBps)
		return &contract.DryRunOrder{
			Market: req.Market.Canonical, VenueSymbol: req.Market.Native, Type: kind, Side: side,
			Size: req.Size, Price: price, TriggerPrice: &t, Notional: req.Size.Mul(price), ReduceOnly: true,
			ClientOrderID: req.ClientOrderID + sfx,
		}
	}
	return contract.DryRunProtectionResult{DryRun: true,
		TakeProfit: leg("TAKE_PROFIT", "-tp", req.TakeProfit), StopLoss: leg("STOP_LOSS", "-sl", req.StopLoss)}, nil
}
