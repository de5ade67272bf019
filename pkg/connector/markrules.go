package connector

import (
	"context"

	"github.com/perpgate/perpgate/pkg/contract"
)

// Venue rules judged at the mark price, once for every connector.
//
// A stop fires when the mark reaches its trigger from where the mark is at
// placement (DESIGN §13): a trigger above the mark on the way up, one below
// on the way down, whatever the side. Venues say the same thing in their
// own words (Binance STOP_MARKET or TAKE_PROFIT_MARKET, Hyperliquid sl or
// tp, Bybit triggerDirection), so the runtime fixes the mark once and each
// adapter translates the direction.

// markStop gives a stop order the mark it is placed against; a trigger on
// the mark has no direction and is refused.
func (d dispatch) markStop(ctx context.Context, o *OrderRequest) error {
	if o.Type != Stop {
		return nil
	}
	mp, err := d.markPrice(ctx, o.Market)
	if err != nil {
		return err
	}
	if !mp.MarkPrice.IsPositive() {
		return contract.Errorf(contract.CodeServiceUnavailable,
			"no mark price for %s: a stop's direction is judged from the mark, try again shortly", o.Market.Canonical)
	}
	if o.TriggerPrice.Equal(mp.MarkPrice) {
		return contract.Errorf(contract.CodeInvalidRequest,
			"triggerPrice %s equals the mark price of %s: a stop fires when the mark reaches the trigger from above or below, "+
				"so set it above the mark (fires on the way up) or below (fires on the way down)", o.TriggerPrice, o.Market.Canonical)
	}
	o.Mark = mp.MarkPrice
	return nil
}

// StopRises reports whether a stop order fires on the way up: its trigger
// is above the mark at placement.
func (o OrderRequest) StopRises() bool { return o.TriggerPrice.GreaterThan(o.Mark) }

// StopAgainstSide reports whether a stop fires as the price moves against
// its side (a buy above the mark, a sell below): what venues call a stop,
// the other direction being their take-profit.
func (o OrderRequest) StopAgainstSide() bool { return o.StopRises() == (o.Side == contract.Buy) }

// minNotionalAtMark applies the minimum order value of a venue that values
// a limit order at the mark price (Market.MinNotionalAtMark): a buy below
// the mark can pass and a sell above it fail where the limit price would
// say otherwise. Reduce-only orders are judged as the venue does.
func (d dispatch) minNotionalAtMark(ctx context.Context, o OrderRequest) error {
	m := o.Market
	if o.Type != Limit || !m.MinNotionalAtMark || !m.MinNotional.IsPositive() || (o.ReduceOnly && m.ReduceOnlyBelowMinNotional) {
		return nil
	}
	mp, err := d.markPrice(ctx, m)
	if err != nil {
		return err
	}
	if v := o.Size.Mul(mp.MarkPrice); mp.MarkPrice.IsPositive() && v.LessThan(m.MinNotional) {
		return contract.Errorf(contract.CodeInvalidRequest,
			"order value %s (size %s x mark price %s) is below the minimum notional %s of %s, which this exchange judges at the mark price",
			v, o.Size, mp.MarkPrice, m.MinNotional, m.Canonical)
	}
	return nil
}
