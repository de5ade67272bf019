package connector

import (
	"context"

	"github.com/perpgate/perpgate/pkg/contract"
)

// The four market-data reads: from the stream view while it is fresh, else
// from the venue's REST API as before, stamped with asOf (DESIGN §12).

func (d dispatch) markPrice(ctx context.Context, m Market) (contract.MarkPriceResult, error) {
	if res, ok := d.r.streams.markPrice(d.cred.Environment, m); ok {
		return res, nil
	}
	res, err := d.r.adapter.GetMarkPrice(ctx, d.cred, m)
	res.AsOf = d.asOf(res.AsOf)
	return res, err
}

func (d dispatch) orderbook(ctx context.Context, m Market, depth int) (contract.OrderbookResult, error) {
	if res, ok := d.r.streams.orderbook(d.cred.Environment, m, depth); ok {
		return res, nil
	}
	res, err := d.r.adapter.GetOrderbook(ctx, d.cred, m, depth)
	res.AsOf = d.asOf(res.AsOf)
	return res, err
}

func (d dispatch) fundingRate(ctx context.Context, m Market) (contract.FundingRateResult, error) {
	if res, ok := d.r.streams.fundingRate(d.cred.Environment, m); ok {
		return res, nil
	}
	res, err := d.r.adapter.GetFundingRate(ctx, d.cred, m)
	res.AsOf = d.asOf(res.AsOf)
	return res, err
}

func (d dispatch) marketsWithFunding(ctx context.Context) (contract.MarketsResult, error) {
	if set, err := d.r.markets.set(ctx, d.r.adapter, d.cred, false); err == nil {
		if res, ok := d.r.streams.marketsWithFunding(d.cred.Environment, set.list); ok {
			return res, nil
		}
	}
	res, err := d.r.adapter.GetMarketsWithFunding(ctx, d.cred)
	res.AsOf = d.asOf(res.AsOf)
	return res, err
}

// asOf keeps the venue's own timestamp when the adapter gave one, else the
// time its answer was received.
func (d dispatch) asOf(venue int64) int64 {
	if venue != 0 {
		return venue
	}
	return d.r.cfg.Now().UnixMilli()
}
