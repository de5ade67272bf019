package binance

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Adapter implements connector.Adapter on Binance USDⓈ-M Futures. It holds
// no venue state, only per-host caches: clock offsets, weight budgets,
// symbol rules, position modes and open interest.
type Adapter struct {
	*fapi.MarketData // depth, mark price, funding rate, candles
	*fapi.Placer     // limit and market orders
	*fapi.Reads      // fees, balance, fills

	cfg Config
	c   *client

	mu    sync.Mutex
	lists venuekit.Catalog[symbolMeta] // by REST base: markets and their market-order rules
	modes fapi.Modes                   // hedge mode, by REST base + apiKey
	oi    map[string]oiEntry           // by REST base + symbol
}

var (
	_ connector.Adapter        = (*Adapter)(nil)
	_ connector.LeverageReader = (*Adapter)(nil)
)

// oiTTL is how long an open-interest reading is reused: Binance has no bulk
// open-interest endpoint (fact sheet §0 #6), so each symbol costs a call.
const oiTTL = time.Minute

type oiEntry struct {
	value decimal.Decimal
	at    time.Time
}

// NewAdapter returns an adapter for cfg; hc nil means connector.NewHTTPClient.
func NewAdapter(cfg Config, hc *http.Client) *Adapter {
	if hc == nil {
		hc = connector.NewHTTPClient(cfg.Timeout)
	}
	a := &Adapter{
		cfg: cfg,
		c:   newClient(cfg, hc),
		oi:  map[string]oiEntry{},
	}
	a.MarketData = &fapi.MarketData{Venue: "Binance", Prefix: "/fapi/v1", Call: a.public, Base: a.base, Now: a.c.now}
	a.Reads = &fapi.Reads{Signed: a.signed, Fees: "/fapi/v1/commissionRate", Balance: "/fapi/v3/account", Trades: "/fapi/v1/userTrades", Fill: fillFromWire}
	a.modes = fapi.Modes{Venue: "Binance", Now: a.c.now, Key: a.modeKey, Read: a.readMode}
	// No order answer has the fee (fact sheet §0 #3) nor, since 2026-07,
	// the average price: Query Order has it.
	a.Placer = &fapi.Placer{Errors: venueErrors, Signed: a.signed, Prefix: "/fapi/v1",
		ByOrderID: true, CheckID: checkClientID, OneWay: a.modes.OneWay, ForgetMode: a.modes.Forget, Meta: a.symbolMeta,
		Wait: func(ctx context.Context, d time.Duration) error { return a.c.wait(ctx, d) }}
	return a
}

// Exchange implements connector.Adapter.
func (a *Adapter) Exchange() contract.Exchange { return contract.Binance }

// secret is a Binance credential's secret (DESIGN §5).
type secret struct {
	APIKey    string `json:"apiKey"`
	APISecret string `json:"apiSecret"`
}

func credKeys(c connector.Credential) (*keys, error) {
	var s secret
	if len(c.Secret) == 0 || c.Secret.Decode(&s) != nil || s.APIKey == "" || s.APISecret == "" {
		return nil, contract.Upstream(contract.ReasonAuthenticationFailed, "", "", "%v: store apiKey and apiSecret", errNoKeys)
	}
	return &keys{apiKey: s.APIKey, secret: s.APISecret}, nil
}

func (a *Adapter) base(c connector.Credential) string { return a.cfg.BaseURL(c.Environment) }

// public calls an unsigned market-data endpoint.
func (a *Adapter) public(ctx context.Context, c connector.Credential, path string, p params, weight int, out any) error {
	return a.c.do(ctx, a.base(c), nil, request{method: http.MethodGet, path: path, params: p, weight: weight}, out)
}

// signed calls a TRADE or USER_DATA endpoint with the credential's keys.
func (a *Adapter) signed(ctx context.Context, c connector.Credential, method, path string, p params, weight int, out any) error {
	k, err := credKeys(c)
	if err != nil {
		return err
	}
	return a.c.do(ctx, a.base(c), k, request{method: method, path: path, params: p, signed: true, weight: weight}, out)
}

func symbolParam(m connector.Market) params { return params{}.Add("symbol", m.Native) }

// Markets implements connector.Adapter: the USDT perpetuals of
// exchangeInfo with their filters. It also takes the weight limit.
func (a *Adapter) Markets(ctx context.Context, c connector.Credential) ([]connector.Market, error) {
	var info exchangeInfo
	if err := a.public(ctx, c, "/fapi/v1/exchangeInfo", nil, 1, &info); err != nil {
		return nil, err
	}
	list, meta := marketsFromInfo(info)
	base := a.base(c)
	a.c.host(base).gate.SetLimit(weightLimit(info))
	a.lists.Put(base, list, meta)
	return list, nil
}

func (a *Adapter) symbolMeta(c connector.Credential, native string) symbolMeta {
	m, _ := a.lists.Rules(a.base(c), native)
	return m
}

// GetMarketsWithFunding implements connector.Adapter: every premium index
// in one call, open interest per symbol (cached for oiTTL, fetched a few
// at a time).
func (a *Adapter) GetMarketsWithFunding(ctx context.Context, c connector.Credential) (contract.MarketsResult, error) {
	base := a.base(c)
	list, err := a.lists.Get(ctx, base, func(ctx context.Context) ([]connector.Market, error) { return a.Markets(ctx, c) })
	if err != nil {
		return contract.MarketsResult{}, err
	}
	var all []premiumIndex
	if err := a.public(ctx, c, "/fapi/v1/premiumIndex", nil, 10, &all); err != nil {
		return contract.MarketsResult{}, err
	}
	hours, err := a.FundingHours(ctx, c)
	if err != nil {
		return contract.MarketsResult{}, err
	}
	byNative := map[string]premiumIndex{}
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
			FundingIntervalHours: fapi.IntervalOf(hours, m.Native)})
	}
	if err := a.fillOpenInterest(ctx, c, out); err != nil {
		return contract.MarketsResult{}, err
	}
	return contract.MarketsResult{Markets: out}, nil
}

func (a *Adapter) fillOpenInterest(ctx context.Context, c connector.Credential, entries []contract.MarketEntry) error {
	base := a.base(c)
	now := a.c.now()
	var todo []int
	a.mu.Lock()
	for i := range entries {
		if e, ok := a.oi[base+" "+entries[i].Symbol]; ok && now.Sub(e.at) < oiTTL {
			entries[i].OpenInterest = &e.value
		} else {
			todo = append(todo, i)
		}
	}
	a.mu.Unlock()
	sem := make(chan struct{}, 8)
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	for j, i := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var oi openInterest
			if errs[j] = a.public(ctx, c, "/fapi/v1/openInterest", params{}.Add("symbol", entries[i].Symbol), 1, &oi); errs[j] == nil {
				entries[i].OpenInterest = &oi.OpenInterest
			}
		}()
	}
	wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	for j, i := range todo {
		if errs[j] != nil {
			return errs[j]
		}
		a.oi[base+" "+entries[i].Symbol] = oiEntry{value: *entries[i].OpenInterest, at: now}
	}
	return nil
}

// GetPositions implements connector.Adapter. /fapi/v3/positionRisk has no
// leverage (fact sheet §0 #5): it comes from /fapi/v1/symbolConfig.
func (a *Adapter) GetPositions(ctx context.Context, c connector.Credential, m *connector.Market) (contract.PositionsResult, error) {
	var p params
	if m != nil {
		p = symbolParam(*m)
	}
	var rows []positionRisk
	if err := a.signed(ctx, c, http.MethodGet, "/fapi/v3/positionRisk", p, 5, &rows); err != nil {
		return contract.PositionsResult{}, err
	}
	out := []contract.Position{}
	if !slices.ContainsFunc(rows, func(r positionRisk) bool { return !r.PositionAmt.IsZero() }) {
		return contract.PositionsResult{Positions: out}, nil
	}
	var cfgs []symbolConfig
	if err := a.signed(ctx, c, http.MethodGet, "/fapi/v1/symbolConfig", p, 5, &cfgs); err != nil {
		return contract.PositionsResult{}, err
	}
	lev := map[string]int{}
	for _, s := range cfgs {
		lev[s.Symbol] = s.Leverage
	}
	for _, r := range rows {
		if !r.PositionAmt.IsZero() {
			out = append(out, positionFromWire(r, lev[r.Symbol]))
		}
	}
	return contract.PositionsResult{Positions: out}, nil
}

// GetLeverage implements connector.LeverageReader: /fapi/v1/symbolConfig
// holds the symbol's leverage, position or not.
func (a *Adapter) GetLeverage(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	var cfgs []symbolConfig
	if err := a.signed(ctx, c, http.MethodGet, "/fapi/v1/symbolConfig", symbolParam(m), 5, &cfgs); err != nil {
		return 0, err
	}
	for _, s := range cfgs {
		if s.Symbol == m.Native {
			return s.Leverage, nil
		}
	}
	return 0, nil
}

// GetOrders implements connector.Adapter: regular open orders and the
// conditional orders of the algo service, which Binance lists apart.
func (a *Adapter) GetOrders(ctx context.Context, c connector.Credential, m *connector.Market) (contract.OrdersResult, error) {
	regular, algos, err := a.openOrders(ctx, c, m)
	if err != nil {
		return contract.OrdersResult{}, err
	}
	out := make([]contract.Order, 0, len(regular)+len(algos))
	for _, o := range regular {
		out = append(out, orderFromWire(o))
	}
	for _, o := range algos {
		out = append(out, algoFromWire(o))
	}
	return contract.OrdersResult{Orders: out}, nil
}

func (a *Adapter) openOrders(ctx context.Context, c connector.Credential, m *connector.Market) ([]order, []algoOrder, error) {
	var p params
	weight := 40
	if m != nil {
		p, weight = symbolParam(*m), 1
	}
	var regular []order
	if err := a.signed(ctx, c, http.MethodGet, "/fapi/v1/openOrders", p, weight, &regular); err != nil {
		return nil, nil, err
	}
	var algos []algoOrder
	if err := a.signed(ctx, c, http.MethodGet, "/fapi/v1/openAlgoOrders", p, weight, &algos); err != nil {
		return nil, nil, err
	}
	return regular, algos, nil
}

// TestCredentials implements connector.Adapter with GET
// /fapi/v1/accountConfig, a signed read that checks key and secret; a
// rejected credential is valid:false. It also learns the position mode.
func (a *Adapter) TestCredentials(ctx context.Context, c connector.Credential) (bool, error) {
	return venuekit.CheckKeys(ctx, contract.Binance, func() (*keys, error) { return credKeys(c) },
		func(ctx context.Context, k *keys) error { _, err := a.accountConfig(ctx, c, k); return err })
}

func (a *Adapter) accountConfig(ctx context.Context, c connector.Credential, k *keys) (accountConfig, error) {
	var cfg accountConfig
	base := a.base(c)
	if err := a.c.do(ctx, base, k, request{method: http.MethodGet, path: "/fapi/v1/accountConfig", signed: true, weight: 5}, &cfg); err != nil {
		return cfg, err
	}
	a.modes.Put(base+" "+k.apiKey, cfg.DualSidePosition)
	return cfg, nil
}

// modeKey is the REST base and API key a position mode is cached under.
func (a *Adapter) modeKey(c connector.Credential) (string, error) {
	k, err := credKeys(c)
	if err != nil {
		return "", err
	}
	return a.base(c) + " " + k.apiKey, nil
}

func (a *Adapter) readMode(ctx context.Context, c connector.Credential) (bool, error) {
	k, err := credKeys(c)
	if err != nil {
		return false, err
	}
	cfg, err := a.accountConfig(ctx, c, k)
	return cfg.DualSidePosition, err
}
