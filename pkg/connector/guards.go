package connector

import (
	"context"
	"strings"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// The key guards that need a venue's view (DESIGN §12): allowedMarkets on
// the resolved market, and the notional caps on the rounded order at its
// price or the mark price. The edge checks readOnly and maxLeverage itself.

// allowMarket refuses a trading call on a market outside the key's
// allowedMarkets.
func (d dispatch) allowMarket(m Market) error {
	if d.guards == nil || d.guards.AllowsMarket(m.Canonical) {
		return nil
	}
	return contract.Errorf(contract.CodeMarketNotAllowed,
		"market %s is not in this key's allowedMarkets (%s)", m.Canonical, strings.Join(d.guards.AllowedMarkets, ", "))
}

// needsNotional reports whether an order's notional must be known: for a
// cap or to show it in a dry run.
func (d dispatch) needsNotional(dryRun bool) bool {
	return dryRun || d.guards != nil && (d.guards.MaxOrderNotional != nil || d.guards.MaxDailyNotional != nil)
}

// priced is an order with the price its notional is taken at.
type priced struct {
	OrderRequest
	price    decimal.Decimal
	notional decimal.Decimal
}

// judge checks one prepared order against maxOrderNotional (prepare has
// checked its market; the daily cap needs the idempotency claim first). A market or stop
// order is valued at the mark price.
func (d dispatch) judge(ctx context.Context, o OrderRequest, dryRun bool) (priced, error) {
	p := priced{OrderRequest: o}
	if !d.needsNotional(dryRun) {
		return p, nil
	}
	p.price = o.Price
	if o.Type != Limit {
		mp, err := d.r.adapter.GetMarkPrice(ctx, d.cred, o.Market)
		if err != nil {
			return p, err
		}
		p.price = mp.MarkPrice
	}
	p.notional = o.Size.Mul(p.price)
	if d.guards != nil && d.guards.MaxOrderNotional != nil && p.notional.GreaterThan(*d.guards.MaxOrderNotional) {
		return p, contract.Errorf(contract.CodeOrderNotionalExceeded,
			"order notional %s (size %s × price %s) is above this key's maxOrderNotional of %s %s",
			p.notional, o.Size, p.price, d.guards.MaxOrderNotional, o.Market.Quote)
	}
	return p, nil
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
	day, id, limit := ledgerDay(d.r.cfg.Now()), d.ledgerID(p.ClientOrderID), *d.guards.MaxDailyNotional
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
	used = used.Add(pending)
	if limit := *d.guards.MaxDailyNotional; used.Add(p.notional).GreaterThan(limit) {
		return dailyExceeded(p, used, limit)
	}
	return nil
}

func dailyExceeded(p priced, used, limit decimal.Decimal) error {
	return contract.Errorf(contract.CodeDailyNotionalExceeded,
		"order notional %s would take today's total (UTC) from %s to %s, above this key's maxDailyNotional of %s",
		p.notional, used, used.Add(p.notional), limit)
}

func (d dispatch) ledgerDown(err error) error {
	d.r.log.Warn("notional ledger unavailable", "err", err)
	ce := contract.Errorf(contract.CodeServiceUnavailable,
		"the gateway cannot count this key's daily notional (its store is unreachable), so nothing was placed; retry shortly")
	ce.RetryAfterSeconds = 2
	return ce
}

// withDailyCap wraps a placement so it is counted against the daily cap
// first and uncounted when the venue certainly did not take it.
func (d dispatch) withDailyCap(p priced, place func(context.Context) (any, error)) func(context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
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
	out := contract.DryRunOrder{
		Market: p.Market.Canonical, VenueSymbol: p.Market.Native, Type: string(p.Type), Side: p.Side,
		Size: p.Size, Price: p.price, Notional: p.notional, PostOnly: p.PostOnly, ReduceOnly: p.ReduceOnly,
		ClientOrderID: p.ClientOrderID,
	}
	if p.Type == Stop {
		t := p.TriggerPrice
		out.TriggerPrice = &t
	}
	return out
}

// dryRunProtection describes the legs a protection request would place:
// reduce-only market orders on the opposite side, triggered on mark price.
func dryRunProtection(req ProtectionRequest) contract.DryRunProtectionResult {
	side := contract.Sell
	if req.PositionSide == contract.Short {
		side = contract.Buy
	}
	leg := func(kind, sfx string, trigger *decimal.Decimal) *contract.DryRunOrder {
		if trigger == nil {
			return nil
		}
		t := *trigger
		return &contract.DryRunOrder{
			Market: req.Market.Canonical, VenueSymbol: req.Market.Native, Type: kind, Side: side,
			Size: req.Size, Price: t, TriggerPrice: &t, Notional: req.Size.Mul(t), ReduceOnly: true,
			ClientOrderID: req.ClientOrderID + sfx,
		}
	}
	return contract.DryRunProtectionResult{DryRun: true,
		TakeProfit: leg("TAKE_PROFIT", "-tp", req.TakeProfit), StopLoss: leg("STOP_LOSS", "-sl", req.StopLoss)}
}
