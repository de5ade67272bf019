package connector

import (
	"context"

	"github.com/perpgate/perpgate/pkg/contract"
)

// The four market-data reads: from the stream view while it is fresh, else
// from the venue's REST API as before, stamped with asOf (DESIGN §12).

func (d dispatch) markPrice(ctx context.Context, m Market) (contract.MarkPriceResult, error) {
	res, ok := d.r.streams.markPrice(d.streamEnv(), m)
	if d.observe(contract.OpGetMarkPrice, ok) {
		return res, nil
	}
	res, err := d.r.adapter.GetMarkPrice(ctx, d.cred, m)
	res.AsOf = d.asOf(res.AsOf)
	return res, err
}

func (d dispatch) orderbook(ctx context.Context, m Market, depth int) (contract.OrderbookResult, error) {
	if res, ok := d.r.streams.orderbook(d.streamEnv(), m, depth); d.observe(contract.OpGetOrderbook, ok) {
		return res, nil
	}
	res, err := d.r.adapter.GetOrderbook(ctx, d.cred, m, depth)
	res.AsOf = d.asOf(res.AsOf)
	return res, err
}

func (d dispatch) fundingRate(ctx context.Context, m Market) (contract.FundingRateResult, error) {
	res, ok := d.r.streams.fundingRate(d.streamEnv(), m)
	if ok { // the first read learns the market's interval over REST
		res.FundingIntervalHours = d.r.intervals.get(d.cred.Environment, m.Native)
		ok = res.FundingIntervalHours > 0
	}
	if d.observe(contract.OpGetFundingRate, ok) {
		return res, nil
	}
	res, err := d.r.adapter.GetFundingRate(ctx, d.cred, m)
	if err == nil {
		d.r.intervals.put(d.cred.Environment, m.Native, res.FundingIntervalHours)
	}
	res.AsOf = d.asOf(res.AsOf)
	return res, err
}

func (d dispatch) marketsWithFunding(ctx context.Context) (contract.MarketsResult, error) {
	if ls, ok := d.r.adapter.(MarketListStreamer); ok && ls.StreamsMarketList() {
		if set, err := d.r.markets.set(ctx, d.r.adapter, d.cred, false); err == nil {
			res, ok := d.r.streams.marketsWithFunding(d.streamEnv(), set.list)
			ok = ok && d.withIntervals(res.Markets)
			if d.observe(contract.OpGetMarketsWithFunding, ok) {
				return res, nil
			}
		}
	}
	res, err := d.r.adapter.GetMarketsWithFunding(ctx, d.cred)
	if err == nil {
		for _, e := range res.Markets {
			d.r.intervals.put(d.cred.Environment, e.Symbol, e.FundingIntervalHours)
		}
	}
	res.AsOf = d.asOf(res.AsOf)
	return res, err
}

// withIntervals fills the entries' funding intervals from REST answers
// seen before; false when one is unknown (the list is then read over REST,
// which learns them).
func (d dispatch) withIntervals(entries []contract.MarketEntry) bool {
	for i := range entries {
		if entries[i].FundingIntervalHours = d.r.intervals.get(d.cred.Environment, entries[i].Symbol); entries[i].FundingIntervalHours == 0 {
			return false
		}
	}
	return true
}

// asOf keeps the venue's own timestamp when the adapter gave one, else the
// time its answer was received.
func (d dispatch) asOf(venue int64) int64 {
	if venue != 0 {
		return venue
	}
	return d.r.cfg.Now().UnixMilli()
}

// observe counts where a read is answered from (runtimes with a stream
// only) and passes cached through.
func (d dispatch) observe(op string, cached bool) bool {
	if d.r.streams != nil {
		d.r.cfg.Metrics.ObserveStreamRead(string(d.r.adapter.Exchange()), op, cached)
	}
	return cached
}

// streamEnv is the network whose stream serves this credential, or "" when
// none does (StreamScope).
func (d dispatch) streamEnv() contract.Environment {
	if sc, ok := d.r.adapter.(StreamScope); ok && !sc.StreamsFor(d.cred) {
		return ""
	}
	return d.cred.Environment
}
