package binance

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Adapter implements connector.Adapter on Binance USDⓈ-M Futures (package
// fapi). It holds no venue state, only per-host caches: clock offsets,
// weight budgets, symbol rules, position modes and open interest.
type Adapter struct {
	*fapi.MarketData // depth, mark price, funding rate, candles
	*fapi.Placer     // orders, amends, the dead man's switch
	*fapi.Reads      // fees, balance, fills, funding payments

	cfg Config
	c   *fapi.Client[*keys]

	mu    sync.Mutex
	modes fapi.Modes         // hedge mode, by REST base + apiKey
	oi    map[string]oiEntry // by REST base + symbol
}

var (
	_ connector.Adapter        = (*Adapter)(nil)
	_ connector.LeverageReader = (*Adapter)(nil)
)

// prefix is the REST paths' version.
const prefix = "/fapi/v1"

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
	a := &Adapter{cfg: cfg, c: newClient(cfg, hc), oi: map[string]oiEntry{}}
	// Open interest is per symbol (cached for oiTTL, fetched a few at a
	// time).
	a.MarketData = &fapi.MarketData{Venue: "Binance", Prefix: prefix, Call: a.c.Public, Base: a.c.Base, Now: a.c.Now,
		Lists: a.c, PremiumWeight: 10, OpenInterest: a.fillOpenInterest}
	a.Reads = &fapi.Reads{Signed: a.c.Signed, Fees: prefix + "/commissionRate", Balance: "/fapi/v3/account",
		Trades: prefix + "/userTrades", Income: prefix + "/income", Fill: fillFromWire, Now: a.c.Now}
	a.modes = fapi.Modes{Venue: "Binance", Now: a.c.Now, Key: a.modeKey, Read: a.readMode}
	// No order answer has the fee (fact sheet §0 #3) nor, since 2026-07,
	// the average price: Query Order has it. Stop and protection orders
	// live in the algo service (fact sheet §0 #1).
	a.Placer = &fapi.Placer{Errors: venueErrors, Signed: a.c.Signed, Prefix: prefix,
		ByOrderID: true, CheckID: clientIDRule.Check, OneWay: a.modes.OneWay, ForgetMode: a.modes.Forget, Meta: a.c.Meta, Now: a.c.Now,
		Wait:        func(ctx context.Context, d time.Duration) error { return a.c.Wait(ctx, d) },
		Conditional: a.placeAlgo, Cancel: a.CancelOrder, AmendID: amendID, FindOther: a.findAlgo, Leverage: a.leverages}
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

func (a *Adapter) fillOpenInterest(ctx context.Context, c connector.Credential, entries []contract.MarketEntry) error {
	base := a.c.Base(c)
	now := a.c.Now()
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
			if errs[j] = a.c.Public(ctx, c, prefix+"/openInterest", connector.Query{}.Add("symbol", entries[i].Symbol), 1, &oi); errs[j] == nil {
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

// GetLeverage implements connector.LeverageReader: /fapi/v1/symbolConfig
// holds the symbol's leverage, position or not; /fapi/v3/positionRisk has
// none (fact sheet §0 #5), so fapi's GetPositions reads it there too.
func (a *Adapter) GetLeverage(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	lev, err := a.leverages(ctx, c, &m)
	return lev[m.Native], err
}

// leverages reads /fapi/v1/symbolConfig: each symbol's leverage, of one
// market or (m nil) all of them.
func (a *Adapter) leverages(ctx context.Context, c connector.Credential, m *connector.Market) (map[string]int, error) {
	var p connector.Query
	if m != nil {
		p = fapi.SymbolParam(*m)
	}
	var cfgs []symbolConfig
	err := a.c.Signed(ctx, c, http.MethodGet, prefix+"/symbolConfig", p, 5, &cfgs)
	lev := map[string]int{}
	for _, s := range cfgs {
		lev[s.Symbol] = s.Leverage
	}
	return lev, err
}

// GetOrders implements connector.Adapter: regular open orders and the
// conditional orders of the algo service, which Binance lists apart.
func (a *Adapter) GetOrders(ctx context.Context, c connector.Credential, m *connector.Market) (contract.OrdersResult, error) {
	regular, algos, err := a.openOrders(ctx, c, m)
	if err != nil {
		return contract.OrdersResult{}, err
	}
	out := fapi.Orders(regular, len(algos))
	for _, o := range algos {
		out = append(out, algoFromWire(o))
	}
	return contract.OrdersResult{Orders: out}, nil
}

func (a *Adapter) openOrders(ctx context.Context, c connector.Credential, m *connector.Market) ([]fapi.Order, []algoOrder, error) {
	regular, err := a.OpenOrders(ctx, c, m)
	if err != nil {
		return nil, nil, err
	}
	var p connector.Query
	weight := 40
	if m != nil {
		p, weight = fapi.SymbolParam(*m), 1
	}
	var algos []algoOrder
	err = a.c.Signed(ctx, c, http.MethodGet, prefix+"/openAlgoOrders", p, weight, &algos)
	return regular, algos, err
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
	base := a.c.Base(c)
	if err := a.c.Do(ctx, base, k, fapi.Request{Method: http.MethodGet, Path: prefix + "/accountConfig", Signed: true, Weight: 5}, &cfg); err != nil {
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
	return a.c.Base(c) + " " + k.apiKey, nil
}

func (a *Adapter) readMode(ctx context.Context, c connector.Credential) (bool, error) {
	k, err := credKeys(c)
	if err != nil {
		return false, err
	}
	cfg, err := a.accountConfig(ctx, c, k)
	return cfg.DualSidePosition, err
}
