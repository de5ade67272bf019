package fapi

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Public makes one unsigned (market-data) call of the venue's client.
type Public func(ctx context.Context, c connector.Credential, path string, p connector.Query, weight int, out any) error

// MarketData serves the market-data operations from the venue's REST
// paths: depth, premiumIndex, fundingInfo and klines. An adapter embeds
// it, so GetOrderbook, GetMarkPrice, GetFundingRate and GetCandles are the
// adapter's.
type MarketData struct {
	Venue  string // names the venue in errors: "Binance"
	Prefix string // of the paths: "/fapi/v1"
	Call   Public
	Base   func(connector.Credential) string // the REST base, for the caches
	Now    func() time.Time
	Lists  Lists
	// PremiumWeight is the weight of every symbol's premiumIndex.
	PremiumWeight int
	// OpenInterest fills the entries' open interest; nil when the venue
	// publishes none.
	OpenInterest func(ctx context.Context, c connector.Credential, entries []contract.MarketEntry) error

	mu    sync.Mutex
	hours map[string]hoursEntry // by REST base
}

// hoursTTL is how long fundingInfo's intervals are reused; the venues
// change them rarely and announce it.
const hoursTTL = time.Hour

type hoursEntry struct {
	bySymbol map[string]int
	at       time.Time
}

// SymbolParam is the symbol parameter of market m.
func SymbolParam(m connector.Market) connector.Query {
	return connector.Query{}.Add("symbol", m.Native)
}

// GetOrderbook implements connector.Adapter. The venues take only some
// book sizes: the next larger one is asked for and cut to depth.
func (d *MarketData) GetOrderbook(ctx context.Context, c connector.Credential, m connector.Market, n int) (contract.OrderbookResult, error) {
	limit := DepthLimit(n)
	var b Depth
	if err := d.Call(ctx, c, d.Prefix+"/depth", SymbolParam(m).Add("limit", strconv.Itoa(limit)), DepthWeight(limit), &b); err != nil {
		return contract.OrderbookResult{}, err
	}
	return contract.OrderbookResult{Bids: Levels(b.Bids, n), Asks: Levels(b.Asks, n), AsOf: int64(b.T)}, nil
}

// Premium reads one symbol's premium index.
func (d *MarketData) Premium(ctx context.Context, c connector.Credential, m connector.Market) (PremiumIndex, error) {
	var p PremiumIndex
	err := d.Call(ctx, c, d.Prefix+"/premiumIndex", SymbolParam(m), 1, &p)
	return p, err
}

// GetMarkPrice implements connector.Adapter.
func (d *MarketData) GetMarkPrice(ctx context.Context, c connector.Credential, m connector.Market) (contract.MarkPriceResult, error) {
	p, err := d.Premium(ctx, c, m)
	return contract.MarkPriceResult{MarkPrice: p.MarkPrice, IndexPrice: p.IndexPrice, AsOf: int64(p.Time)}, err
}

// GetFundingRate implements connector.Adapter: the rate of the current
// interval (lastFundingRate) and when it is paid.
func (d *MarketData) GetFundingRate(ctx context.Context, c connector.Credential, m connector.Market) (contract.FundingRateResult, error) {
	p, err := d.Premium(ctx, c, m)
	if err != nil {
		return contract.FundingRateResult{}, err
	}
	hours, err := d.FundingHours(ctx, c)
	return contract.FundingRateResult{FundingRate: p.LastFundingRate, NextFundingTime: int64(p.NextFundingTime / 1000),
		FundingIntervalHours: IntervalOf(hours, m.Native), AsOf: int64(p.Time)}, err
}

// FundingHours reads GET fundingInfo, cached for hoursTTL: Binance lists
// only the symbols whose interval was adjusted from the default 8 hours,
// Aster every symbol.
func (d *MarketData) FundingHours(ctx context.Context, c connector.Credential) (map[string]int, error) {
	base := d.Base(c)
	d.mu.Lock()
	e, ok := d.hours[base]
	d.mu.Unlock()
	if ok && d.Now().Sub(e.at) < hoursTTL {
		return e.bySymbol, nil
	}
	var rows []FundingInfo
	if err := d.Call(ctx, c, d.Prefix+"/fundingInfo", nil, 1, &rows); err != nil {
		return nil, err
	}
	e = hoursEntry{bySymbol: map[string]int{}, at: d.Now()}
	for _, r := range rows {
		if r.FundingIntervalHours > 0 {
			e.bySymbol[r.Symbol] = r.FundingIntervalHours
		}
	}
	d.mu.Lock()
	if d.hours == nil {
		d.hours = map[string]hoursEntry{}
	}
	d.hours[base] = e
	d.mu.Unlock()
	return e.bySymbol, nil
}

// IntervalOf is a symbol's funding interval in hours: 8 unless listed.
func IntervalOf(hours map[string]int, symbol string) int {
	if h, ok := hours[symbol]; ok {
		return h
	}
	return 8
}

// GetCandles implements connector.Adapter; the venues answer oldest first.
func (d *MarketData) GetCandles(ctx context.Context, c connector.Credential, m connector.Market, minutes, limit int) (contract.CandlesResult, error) {
	iv, ok := Intervals[minutes]
	if !ok {
		return contract.CandlesResult{}, contract.Errorf(contract.CodeInvalidRequest, "field \"interval\": %s has no %d-minute candles", d.Venue, minutes)
	}
	weight := 1
	switch {
	case limit >= 1000:
		weight = 10
	case limit >= 500:
		weight = 5
	case limit >= 100:
		weight = 2
	}
	var rows []Kline
	if err := d.Call(ctx, c, d.Prefix+"/klines", SymbolParam(m).Add("interval", iv).Add("limit", strconv.Itoa(limit)), weight, &rows); err != nil {
		return contract.CandlesResult{}, err
	}
	out := make([]contract.Candle, 0, len(rows))
	for _, r := range rows {
		if k, ok := Candle(r); ok {
			out = append(out, k)
		}
	}
	return contract.CandlesResult{Candles: out}, nil
}

// BookSnapshot implements connector.Streamer: GET <prefix>/depth, whose
// lastUpdateId the diff stream continues (the venues' "How to manage a
// local order book correctly").
func (d *MarketData) BookSnapshot(ctx context.Context, env contract.Environment, native string, n int) (connector.BookUpdate, error) {
	limit := DepthLimit(n)
	var b Depth
	c := connector.Credential{CredentialInfo: contract.CredentialInfo{Environment: env}}
	p := connector.Query{}.Add("symbol", native).Add("limit", strconv.Itoa(limit))
	if err := d.Call(ctx, c, d.Prefix+"/depth", p, DepthWeight(limit), &b); err != nil {
		return connector.BookUpdate{}, err
	}
	return connector.BookUpdate{Snapshot: true, Depth: limit, Seq: int64(b.LastUpdateID), Bids: Levels(b.Bids, limit), Asks: Levels(b.Asks, limit)}, nil
}

// Lists are a client's market lists (Client.Markets, Client.MarketList).
type Lists interface {
	Markets(ctx context.Context, c connector.Credential) ([]connector.Market, error)
	MarketList(ctx context.Context, c connector.Credential) ([]connector.Market, error)
}

// Markets implements connector.Adapter (Client.Markets).
func (d *MarketData) Markets(ctx context.Context, c connector.Credential) ([]connector.Market, error) {
	return d.Lists.Markets(ctx, c)
}

// GetMarketsWithFunding implements connector.Adapter: every premium index
// in one call, with the funding intervals and, where the venue has it,
// the open interest.
func (d *MarketData) GetMarketsWithFunding(ctx context.Context, c connector.Credential) (contract.MarketsResult, error) {
	list, err := d.Lists.MarketList(ctx, c)
	if err != nil {
		return contract.MarketsResult{}, err
	}
	var all []PremiumIndex
	if err := d.Call(ctx, c, d.Prefix+"/premiumIndex", nil, d.PremiumWeight, &all); err != nil {
		return contract.MarketsResult{}, err
	}
	hours, err := d.FundingHours(ctx, c)
	if err != nil {
		return contract.MarketsResult{}, err
	}
	byNative := map[string]PremiumIndex{}
	for _, p := range all {
		byNative[p.Symbol] = p
	}
	out := []contract.MarketEntry{}
	for _, m := range list {
		p, ok := byNative[m.Native]
		if !ok {
			continue
		}
		out = append(out, contract.MarketEntry{Symbol: m.Native, MarkPrice: p.MarkPrice, FundingRate: p.LastFundingRate,
			FundingIntervalHours: IntervalOf(hours, m.Native)})
	}
	if d.OpenInterest != nil {
		if err := d.OpenInterest(ctx, c, out); err != nil {
			return contract.MarketsResult{}, err
		}
	}
	return contract.MarketsResult{Markets: out}, nil
}
