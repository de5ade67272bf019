package connector

import (
	"context"
	"slices"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// The guards on what an order adds to the credential's exposure (DESIGN
// §13): maxLeverage refuses an order that can add exposure on a market
// whose leverage is above it, and maxPositionNotional caps the position
// after the order plus the resting orders on its side. Reduce-only orders
// always pass. They run after the idempotency claim, so the retry of an
// order that stands is answered, not judged against its own fill.

// exposureKey names what earlier orders of one batch add: the market and
// side of an order.
func exposureKey(o OrderRequest) string { return o.Market.Canonical + " " + string(o.Side) }

// checkExposure applies maxLeverage and maxPositionNotional to p; pending
// is the notional that earlier orders of the same batch add on p's market
// and side.
func (d dispatch) checkExposure(ctx context.Context, p priced, pending decimal.Decimal) error {
	if d.guards == nil || p.ReduceOnly {
		return nil
	}
	err := d.checkLeverage(ctx, p.Market)
	if err == nil {
		err = d.checkPosition(ctx, p, pending)
	}
	if Ambiguous(err) {
		// Nothing was sent: the read failed, not a placement.
		d.r.log.Warn("cannot read the credential's leverage or position for the key's guards", "market", p.Market.Canonical, "err", err)
		ce := contract.Errorf(contract.CodeServiceUnavailable,
			"the exchange did not tell the credential's leverage or position on %s, which this key's guards judge the order by; nothing was placed, retry shortly",
			p.Market.Canonical)
		ce.RetryAfterSeconds = 2
		return ce
	}
	return err
}

// checkLeverage refuses an order on a market whose leverage on the
// credential is above the key's maxLeverage.
func (d dispatch) checkLeverage(ctx context.Context, m Market) error {
	limit := d.guards.MaxLeverage
	if limit == 0 {
		return nil
	}
	lev, known, err := d.r.leverage.get(ctx, d.cred.ID, m, func(ctx context.Context) (decimal.Decimal, bool, error) {
		return d.readLeverage(ctx, m)
	})
	if err != nil {
		return err
	}
	if !known || !lev.GreaterThan(decimal.NewFromInt(int64(limit))) {
		return nil
	}
	return contract.Errorf(contract.CodeLeverageExceeded,
		"%s is at %sx leverage on this credential, above this key's maxLeverage of %d: "+
			"lower it with setLeverage (%d or less) before placing orders that can add exposure, or use reduceOnly",
		m.Canonical, lev, limit, limit)
}

// readLeverage asks the venue for m's leverage on the credential: its
// setting when the adapter can read it, else the open position's. known is
// false when neither says.
func (d dispatch) readLeverage(ctx context.Context, m Market) (decimal.Decimal, bool, error) {
	if lr, ok := d.r.adapter.(LeverageReader); ok {
		n, err := lr.GetLeverage(ctx, d.cred, m)
		if err != nil {
			return decimal.Zero, false, err
		}
		return decimal.NewFromInt(int64(n)), n > 0, nil
	}
	pos, err := d.position(ctx, m)
	if err != nil || pos == nil || !pos.Leverage.IsPositive() {
		return decimal.Zero, false, err
	}
	return pos.Leverage, true, nil
}

// position is the credential's open position on m, nil when flat.
func (d dispatch) position(ctx context.Context, m Market) (*contract.Position, error) {
	res, err := d.r.adapter.GetPositions(ctx, d.cred, &m)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(res.Positions, func(p contract.Position) bool {
		return !p.Size.IsZero() && (p.Side == contract.Long || p.Side == contract.Short) && (p.Market == m.Native || d.canon(ctx, p.Market) == m.Canonical)
	})
	if i < 0 {
		return nil, nil
	}
	return &res.Positions[i], nil
}

// checkPosition applies maxPositionNotional: the position after p fills
// entirely, plus the resting orders on p's side and pending, valued as
// guards value orders, may not exceed it.
func (d dispatch) checkPosition(ctx context.Context, p priced, pending decimal.Decimal) error {
	if d.guards.MaxPositionNotional == nil {
		return nil
	}
	limit, m := *d.guards.MaxPositionNotional, p.Market
	mark, err := d.guardMark(ctx, m)
	if err != nil {
		return err
	}
	pos, err := d.position(ctx, m)
	if err != nil {
		return err
	}
	held := decimal.Zero // the position's notional on p's side; negative when it is the other side
	if pos != nil {
		held = pos.Size.Abs().Mul(mark)
		if (pos.Side == contract.Long) != (p.Side == contract.Buy) {
			held = held.Neg()
		}
	}
	resting, err := d.restingNotional(ctx, p, mark)
	if err != nil {
		return err
	}
	total := held.Add(resting).Add(pending).Add(p.notional)
	if !total.GreaterThan(limit) {
		return nil
	}
	return contract.Errorf(contract.CodePositionNotionalExceeded,
		"the %s position on %s would reach %s %s (position %s, resting %s orders %s, this order %s), above this key's maxPositionNotional of %s; "+
			"reduce the order or the resting orders, or use reduceOnly",
		positionSideOf(p.Side), m.Canonical, total, m.Quote, held, p.Side, resting.Add(pending), p.notional, limit)
}

func positionSideOf(s contract.Side) contract.PositionSide {
	if s == contract.Buy {
		return contract.Long
	}
	return contract.Short
}

// restingNotional values the open orders on p's market and side that can
// add exposure; p itself (a retry) is left out.
func (d dispatch) restingNotional(ctx context.Context, p priced, mark decimal.Decimal) (decimal.Decimal, error) {
	res, err := d.r.adapter.GetOrders(ctx, d.cred, &p.Market)
	if err != nil {
		return decimal.Zero, err
	}
	sum := decimal.Zero
	for _, o := range res.Orders {
		if o.Side != p.Side || o.ReduceOnly || (o.ClientOrderID != "" && o.ClientOrderID == p.ClientOrderID) {
			continue
		}
		if o.Market != p.Market.Native && d.canon(ctx, o.Market) != p.Market.Canonical {
			continue
		}
		left := o.Size.Sub(o.FilledSize)
		if !left.IsPositive() {
			continue
		}
		sum = sum.Add(left.Mul(restingPrice(o, mark, d.r.cfg.Guards.MarketSlippageBps)))
	}
	return sum, nil
}

// restingPrice values a resting order as guardPrice values a new one.
func restingPrice(o contract.Order, mark, slippageBps decimal.Decimal) decimal.Decimal {
	limit := o.Type == string(Limit)
	if limit && o.Side == contract.Buy {
		return o.Price
	}
	own := o.Price
	if o.TriggerPrice != nil {
		own = *o.TriggerPrice
	}
	return worstPrice(!limit, own, mark, slippageBps)
}
