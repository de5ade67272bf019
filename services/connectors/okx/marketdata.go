package okx

import (
	"context"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// GetOrderbook implements connector.Adapter; sizes become base units.
func (a *Adapter) GetOrderbook(ctx context.Context, c connector.Credential, m connector.Market, depth int) (contract.OrderbookResult, error) {
	im, err := a.inst(ctx, c, m.Native)
	if err != nil {
		return contract.OrderbookResult{}, err
	}
	var books []book
	if err := a.public(ctx, c, "/api/v5/market/books", instParam(m).Add("sz", strconv.Itoa(min(max(depth, 1), 400))), rule{n: 40}, &books); err != nil {
		return contract.OrderbookResult{}, err
	}
	if len(books) == 0 {
		return contract.OrderbookResult{Bids: []contract.Level{}, Asks: []contract.Level{}}, nil
	}
	return contract.OrderbookResult{Bids: levels(books[0].Bids, im, depth), Asks: levels(books[0].Asks, im, depth)}, nil
}

// GetMarkPrice implements connector.Adapter: the mark price has no index
// price beside it; that is a second call keyed by the index name (fact
// sheet §0 #7).
func (a *Adapter) GetMarkPrice(ctx context.Context, c connector.Credential, m connector.Market) (contract.MarkPriceResult, error) {
	im, err := a.inst(ctx, c, m.Native)
	if err != nil {
		return contract.MarkPriceResult{}, err
	}
	var marks []markPrice
	if err := a.public(ctx, c, "/api/v5/public/mark-price", params{}.Add("instType", "SWAP").Add("instId", m.Native), rule{n: 10, byInst: true}, &marks); err != nil {
		return contract.MarkPriceResult{}, err
	}
	var idx []indexTicker
	if err := a.public(ctx, c, "/api/v5/market/index-tickers", params{}.Add("instId", im.family), rule{n: 20}, &idx); err != nil {
		return contract.MarkPriceResult{}, err
	}
	if len(marks) == 0 || len(idx) == 0 {
		return contract.MarkPriceResult{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "OKX has no mark or index price for %s", m.Native)
	}
	return contract.MarkPriceResult{MarkPrice: marks[0].MarkPx.Decimal, IndexPrice: idx[0].IdxPx.Decimal}, nil
}

// candlesPerCall is the most candles /market/candles answers (fact sheet
// §0 #8).
const candlesPerCall = 300

// GetCandles implements connector.Adapter, oldest first. More than 300
// candles take a second call for the older ones (after = oldest ts).
func (a *Adapter) GetCandles(ctx context.Context, c connector.Credential, m connector.Market, minutes, limit int) (contract.CandlesResult, error) {
	bar, ok := bars[minutes]
	if !ok {
		return contract.CandlesResult{}, contract.Errorf(contract.CodeInvalidRequest, "field \"interval\": OKX has no %d-minute candles", minutes)
	}
	var rows []candle
	after := ""
	for len(rows) < limit {
		q := instParam(m).Add("bar", bar).Add("limit", strconv.Itoa(min(limit-len(rows), candlesPerCall)))
		if after != "" {
			q = q.Add("after", after)
		}
		var page []candle
		if err := a.public(ctx, c, "/api/v5/market/candles", q, rule{n: 40}, &page); err != nil {
			return contract.CandlesResult{}, err
		}
		rows = append(rows, page...)
		if len(page) < candlesPerCall {
			break
		}
		after = oldestTS(page)
	}
	return contract.CandlesResult{Candles: candlesFromWire(rows)}, nil
}

func oldestTS(rows []candle) string {
	oldest := ""
	var min int64
	for _, r := range rows {
		if len(r) == 0 {
			continue
		}
		if t, err := strconv.ParseInt(r[0], 10, 64); err == nil && (oldest == "" || t < min) {
			oldest, min = r[0], t
		}
	}
	return oldest
}

// GetFundingRate implements connector.Adapter: the rate of the coming
// settlement and its time, fundingTime (nextFundingTime is the one after:
// fact sheet §5).
func (a *Adapter) GetFundingRate(ctx context.Context, c connector.Credential, m connector.Market) (contract.FundingRateResult, error) {
	var rates []fundingRate
	if err := a.public(ctx, c, "/api/v5/public/funding-rate", instParam(m), rule{n: 10, byInst: true}, &rates); err != nil {
		return contract.FundingRateResult{}, err
	}
	if len(rates) == 0 {
		return contract.FundingRateResult{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "OKX has no funding rate for %s", m.Native)
	}
	return contract.FundingRateResult{FundingRate: rates[0].FundingRate.Decimal, NextFundingTime: int64(rates[0].FundingTime) / 1000,
		FundingIntervalHours: rates[0].intervalHours()}, nil
}

// intervalHours is the time between the coming settlement and the one
// after it, which the rate covers; OKX's usual 8 hours when either is
// missing.
func (r fundingRate) intervalHours() int {
	if h := int((int64(r.NextFundingTime) - int64(r.FundingTime)) / 3_600_000); h > 0 && r.FundingTime > 0 {
		return h
	}
	return 8
}

// GetMarketsWithFunding implements connector.Adapter with three bulk
// calls joined by instId: mark prices, funding rates (instId=ANY) and open
// interest in coins (oiCcy).
func (a *Adapter) GetMarketsWithFunding(ctx context.Context, c connector.Credential) (contract.MarketsResult, error) {
	list, err := a.lists.Get(ctx, a.scope(c), func(ctx context.Context) ([]connector.Market, error) { return a.Markets(ctx, c) })
	if err != nil {
		return contract.MarketsResult{}, err
	}
	var marks []markPrice
	if err := a.public(ctx, c, "/api/v5/public/mark-price", params{}.Add("instType", "SWAP"), rule{n: 10}, &marks); err != nil {
		return contract.MarketsResult{}, err
	}
	var rates []fundingRate
	if err := a.public(ctx, c, "/api/v5/public/funding-rate", params{}.Add("instId", "ANY"), rule{n: 10}, &rates); err != nil {
		return contract.MarketsResult{}, err
	}
	var ois []openInterest
	if err := a.public(ctx, c, "/api/v5/public/open-interest", params{}.Add("instType", "SWAP"), rule{n: 20}, &ois); err != nil {
		return contract.MarketsResult{}, err
	}
	mark, rate, oi := map[string]decimal.Decimal{}, map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	hours := map[string]int{}
	for _, x := range marks {
		mark[x.InstID] = x.MarkPx.Decimal
	}
	for _, x := range rates {
		rate[x.InstID], hours[x.InstID] = x.FundingRate.Decimal, x.intervalHours()
	}
	for _, x := range ois {
		oi[x.InstID] = x.OiCcy.Decimal
	}
	out := []contract.MarketEntry{}
	for _, m := range list {
		px, ok := mark[m.Native]
		if !ok {
			continue
		}
		h := hours[m.Native]
		if h == 0 {
			h = 8
		}
		out = append(out, contract.MarketEntry{Symbol: m.Native, MarkPrice: px, FundingRate: rate[m.Native], OpenInterest: new(oi[m.Native]),
			FundingIntervalHours: h})
	}
	return contract.MarketsResult{Markets: out}, nil
}
