package paradex

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
	"github.com/shopspring/decimal"
)

// Adapter implements connector.Adapter on Paradex perpetuals. It holds
// only caches: JWTs per credential, chain ids, clock offsets and quotas
// (client), and market rules per host.
type Adapter struct {
	cfg Config
	c   *client

	mu      sync.Mutex
	lists   venuekit.Lists // by REST base
	periods map[string]map[string]decimal.Decimal
	fees    map[string]map[string][2]decimal.Decimal // maker, taker rates
}

var (
	_ connector.Adapter          = (*Adapter)(nil)
	_ connector.ProtectionLinker = (*Adapter)(nil)
	_ connector.LeverageReader   = (*Adapter)(nil)
)

// NewAdapter returns an adapter for cfg; hc nil means connector.NewHTTPClient.
func NewAdapter(cfg Config, hc *http.Client) *Adapter {
	if hc == nil {
		hc = connector.NewHTTPClient(cfg.Timeout)
	}
	return &Adapter{cfg: cfg, c: newClient(cfg, hc),
		periods: map[string]map[string]decimal.Decimal{}, fees: map[string]map[string][2]decimal.Decimal{}}
}

// Exchange implements connector.Adapter.
func (a *Adapter) Exchange() contract.Exchange { return contract.Paradex }

// LinksProtection implements connector.ProtectionLinker: false. Paradex
// links TP/SL pairs made in its UI (OCO), but the API documents no link
// between two TAKE_PROFIT_MARKET / STOP_LOSS_MARKET orders placed by a
// client, so the runtime watches each pair and cancels the leg left over.
func (a *Adapter) LinksProtection() bool { return false }

// secret is a Paradex credential's secret: the Starknet account address
// and its Stark key (the main key or a subkey registered to it).
type secret struct {
	AccountAddress  string `json:"accountAddress"`
	StarkPrivateKey string `json:"starkPrivateKey"`
}

// ValidateSecret checks a credential secret before it is stored: the
// address must be a felt and the key a Stark scalar. Messages never echo
// the key.
func ValidateSecret(raw contract.Secret) error {
	_, err := decode(connector.Credential{Secret: raw})
	return err
}

func decode(c connector.Credential) (*account, error) {
	var s secret
	if len(c.Secret) == 0 || c.Secret.Decode(&s) != nil || s.AccountAddress == "" || s.StarkPrivateKey == "" {
		return nil, contract.Upstream(contract.ReasonAuthenticationFailed, "", "",
			"the Paradex credential lacks accountAddress or starkPrivateKey: store both (0x-prefixed hex)")
	}
	addr, err := stark.AccountAddress(s.AccountAddress)
	if err != nil {
		return nil, contract.Upstream(contract.ReasonAuthenticationFailed, "", "", "the Paradex credential's %v", err)
	}
	key, err := stark.ParseKey(s.StarkPrivateKey)
	if err != nil {
		return nil, contract.Upstream(contract.ReasonAuthenticationFailed, "", "", "the Paradex credential's %v", err)
	}
	return &account{credID: c.ID, address: addr, key: key}, nil
}

func (a *Adapter) base(c connector.Credential) string { return a.cfg.BaseURL(c.Environment) }

func (a *Adapter) public(ctx context.Context, c connector.Credential, path string, q url.Values, out any) error {
	_, err := a.c.do(ctx, a.base(c), nil, request{method: http.MethodGet, path: path, query: q}, out)
	return err
}

// private sends a JWT-authenticated request.
func (a *Adapter) private(ctx context.Context, c connector.Credential, method, path string, q url.Values, body, out any) error {
	acct, err := decode(c)
	if err != nil {
		return err
	}
	_, err = a.c.do(ctx, a.base(c), acct, request{method: method, path: path, query: q, body: body}, out)
	return err
}

func marketQuery(m connector.Market) url.Values { return url.Values{"market": {m.Native}} }

// Markets implements connector.Adapter: GET /markets, perpetuals kept.
func (a *Adapter) Markets(ctx context.Context, c connector.Credential) ([]connector.Market, error) {
	var l list[marketResp]
	if err := a.public(ctx, c, "/markets", nil, &l); err != nil {
		return nil, err
	}
	var out []connector.Market
	periods := map[string]decimal.Decimal{}
	fees := map[string][2]decimal.Decimal{}
	for _, r := range l.Results {
		m, ok := marketFromWire(r)
		if !ok {
			continue
		}
		out = append(out, m)
		periods[r.Symbol] = r.FundingPeriodHours.D()
		if api := r.FeeConfig.APIFee; api.MakerFee.Fee.Given && api.TakerFee.Fee.Given {
			fees[r.Symbol] = [2]decimal.Decimal{api.MakerFee.Fee.D(), api.TakerFee.Fee.D()}
		}
	}
	base := a.base(c)
	a.mu.Lock()
	a.periods[base], a.fees[base] = periods, fees
	a.lists.Set(base, out)
	a.mu.Unlock()
	return out, nil
}

// known returns the host's markets, reading them once.
func (a *Adapter) known(ctx context.Context, c connector.Credential) ([]connector.Market, error) {
	return a.lists.Get(ctx, a.base(c), func(ctx context.Context) ([]connector.Market, error) { return a.Markets(ctx, c) })
}

// GetOrderbook implements connector.Adapter (GET /orderbook/{market}).
func (a *Adapter) GetOrderbook(ctx context.Context, c connector.Credential, m connector.Market, n int) (contract.OrderbookResult, error) {
	var b bookResp
	if err := a.public(ctx, c, "/orderbook/"+url.PathEscape(m.Native), url.Values{"depth": {strconv.Itoa(min(max(n, 1), 100))}}, &b); err != nil {
		return contract.OrderbookResult{}, err
	}
	return contract.OrderbookResult{Bids: venuekit.Levels(b.Bids, n), Asks: venuekit.Levels(b.Asks, n)}, nil
}

func (a *Adapter) summary(ctx context.Context, c connector.Credential, native string) ([]summaryResp, error) {
	var l list[summaryResp]
	if err := a.public(ctx, c, "/markets/summary", url.Values{"market": {native}}, &l); err != nil {
		return nil, err
	}
	return l.Results, nil
}

func (a *Adapter) summaryOf(ctx context.Context, c connector.Credential, m connector.Market) (summaryResp, error) {
	rows, err := a.summary(ctx, c, m.Native)
	if err != nil {
		return summaryResp{}, err
	}
	for _, r := range rows {
		if r.Symbol == m.Native {
			return r, nil
		}
	}
	return summaryResp{}, contract.Upstream(contract.ReasonUnknown, "", "", "Paradex's markets summary has no %s", m.Native)
}

// GetMarkPrice implements connector.Adapter: mark_price, and the
// underlying (spot) price as the index.
func (a *Adapter) GetMarkPrice(ctx context.Context, c connector.Credential, m connector.Market) (contract.MarkPriceResult, error) {
	s, err := a.summaryOf(ctx, c, m)
	return contract.MarkPriceResult{MarkPrice: s.MarkPrice.D(), IndexPrice: s.UnderlyingPrice.D()}, err
}

// GetFundingRate implements connector.Adapter: funding_rate is the rate
// of one funding period (funding_period_hours); funding is continuous,
// and nextFundingTime follows NextFundingTime's whole-hour convention.
func (a *Adapter) GetFundingRate(ctx context.Context, c connector.Credential, m connector.Market) (contract.FundingRateResult, error) {
	s, err := a.summaryOf(ctx, c, m)
	if err != nil {
		return contract.FundingRateResult{}, err
	}
	hours, _, err := a.FundingHours(ctx, c, m.Native, s.FundingRate.D())
	return contract.FundingRateResult{FundingRate: s.FundingRate.D(), NextFundingTime: NextFundingTime(a.c.now()), FundingIntervalHours: hours}, err
}

// FundingHours is a market's funding period in hours and the hourly rate
// of rate, from the market list (see FundingInterval).
func (a *Adapter) FundingHours(ctx context.Context, c connector.Credential, native string, rate decimal.Decimal) (int, decimal.Decimal, error) {
	if _, err := a.known(ctx, c); err != nil {
		return 0, decimal.Zero, err
	}
	a.mu.Lock()
	p := a.periods[a.base(c)][native]
	a.mu.Unlock()
	iv, h := FundingInterval(rate, p)
	return iv, h, nil
}

// GetCandles implements connector.Adapter. Paradex serves 1, 3, 5, 15, 30
// and 60 minutes (klines page); 240 and 1440 are built from 60-minute
// candles on UTC boundaries.
func (a *Adapter) GetCandles(ctx context.Context, c connector.Credential, m connector.Market, minutes, limit int) (contract.CandlesResult, error) {
	if limit <= 0 {
		limit = 100
	}
	res := minutes
	if !resolutions[minutes] {
		if minutes%60 != 0 || minutes > 7*1440 {
			return contract.CandlesResult{}, contract.Errorf(contract.CodeInvalidRequest,
				"field \"interval\": Paradex has no %d-minute candles; use 1, 3, 5, 15, 30, 60, 240 or 1440", minutes)
		}
		res = 60
	}
	step := int64(minutes) * 60_000
	now := a.c.now().UnixMilli()
	start := (now/step)*step - int64(limit-1)*step
	var rows []contract.Candle
	// Pages of at most 1000 rows, oldest first.
	for from := start; from <= now; {
		to := min(from+1000*int64(res)*60_000-1, now)
		var l struct {
			Results [][]json.Number `json:"results"`
		}
		q := url.Values{"symbol": {m.Native}, "resolution": {strconv.Itoa(res)},
			"start_at": {strconv.FormatInt(from, 10)}, "end_at": {strconv.FormatInt(to, 10)}}
		if err := a.public(ctx, c, "/markets/klines", q, &l); err != nil {
			return contract.CandlesResult{}, err
		}
		for _, r := range l.Results {
			if cd, ok := venuekit.CandleRow(r); ok {
				rows = append(rows, cd)
			}
		}
		from = to + 1
	}
	// aggregate also sorts and trims native candles (one row per bucket).
	return contract.CandlesResult{Candles: aggregate(rows, minutes, limit)}, nil
}

// GetMarketsWithFunding implements connector.Adapter with
// /markets/summary?market=ALL, kept to the listed perpetuals.
func (a *Adapter) GetMarketsWithFunding(ctx context.Context, c connector.Credential) (contract.MarketsResult, error) {
	l, err := a.known(ctx, c)
	if err != nil {
		return contract.MarketsResult{}, err
	}
	rows, err := a.summary(ctx, c, "ALL")
	if err != nil {
		return contract.MarketsResult{}, err
	}
	by := map[string]summaryResp{}
	for _, r := range rows {
		by[r.Symbol] = r
	}
	out := []contract.MarketEntry{}
	for _, m := range l {
		r, ok := by[m.Native]
		if !ok {
			continue
		}
		hours, _, err := a.FundingHours(ctx, c, m.Native, r.FundingRate.D())
		if err != nil {
			return contract.MarketsResult{}, err
		}
		out = append(out, contract.MarketEntry{Symbol: m.Native, MarkPrice: r.MarkPrice.D(), FundingRate: r.FundingRate.D(), OpenInterest: new(r.OpenInterest.D()),
			FundingIntervalHours: hours})
	}
	return contract.MarketsResult{Markets: out}, nil
}

// GetFeeInfo implements connector.Adapter from the market's API fee
// (fee_config.api_fee of /markets; orders sent through the API pay these).
func (a *Adapter) GetFeeInfo(ctx context.Context, c connector.Credential, m connector.Market) (contract.FeeInfoResult, error) {
	if _, err := a.Markets(ctx, c); err != nil {
		return contract.FeeInfoResult{}, err
	}
	a.mu.Lock()
	f, ok := a.fees[a.base(c)][m.Native]
	a.mu.Unlock()
	if !ok { // a fee Paradex does not state is not reported as 0
		return contract.FeeInfoResult{}, contract.Upstream(contract.ReasonUnknown, "", "",
			"Paradex lists %s without a fee_config, so its fee is unknown; see Paradex's fee schedule", m.Native)
	}
	return contract.FeeInfoResult{MakerFee: venuekit.Bps(f[0]), TakerFee: venuekit.Bps(f[1])}, nil
}

// GetBalance implements connector.Adapter from GET /account: equity and
// account value are account_value, free collateral free_collateral (USD).
func (a *Adapter) GetBalance(ctx context.Context, c connector.Credential) (contract.BalanceResult, error) {
	var r accountResp
	if err := a.private(ctx, c, http.MethodGet, "/account", nil, nil, &r); err != nil {
		return contract.BalanceResult{}, err
	}
	return contract.BalanceResult{Equity: r.AccountValue.D(), FreeCollateral: r.FreeCollateral.D(), AccountValue: r.AccountValue.D()}, nil
}

func (a *Adapter) positionRows(ctx context.Context, c connector.Credential) ([]positionResp, error) {
	var l list[positionResp]
	if err := a.private(ctx, c, http.MethodGet, "/positions", nil, nil, &l); err != nil {
		return nil, err
	}
	var out []positionResp
	for _, p := range l.Results {
		if p.Status == "OPEN" && !p.Size.D().IsZero() {
			out = append(out, p)
		}
	}
	return out, nil
}

// GetPositions implements connector.Adapter: OPEN positions of
// GET /positions with the mark price of /markets/summary.
func (a *Adapter) GetPositions(ctx context.Context, c connector.Credential, m *connector.Market) (contract.PositionsResult, error) {
	rows, err := a.positionRows(ctx, c)
	if err != nil {
		return contract.PositionsResult{}, err
	}
	out := []contract.Position{}
	var marks map[string]decimal.Decimal
	for _, p := range rows {
		if m != nil && p.Market != m.Native {
			continue
		}
		if marks == nil {
			marks = map[string]decimal.Decimal{}
			which := "ALL"
			if m != nil {
				which = m.Native
			}
			sum, err := a.summary(ctx, c, which)
			if err != nil {
				return contract.PositionsResult{}, err
			}
			for _, s := range sum {
				marks[s.Symbol] = s.MarkPrice.D()
			}
		}
		out = append(out, positionFromWire(p, marks[p.Market]))
	}
	a.fillLeverage(ctx, c, out)
	return contract.PositionsResult{Positions: out}, nil
}

// fillLeverage gives positions Paradex answered without a leverage the
// leverage of their market's margin config; one it cannot derive stays
// zero, which the contract leaves out (DESIGN §13), never reported as 0.
func (a *Adapter) fillLeverage(ctx context.Context, c connector.Credential, ps []contract.Position) {
	var byMarket map[string]decimal.Decimal
	for i := range ps {
		if ps[i].Leverage.IsPositive() {
			continue
		}
		if byMarket == nil {
			byMarket = map[string]decimal.Decimal{}
			var r marginConfigs
			if err := a.private(ctx, c, http.MethodGet, "/account/margin", nil, nil, &r); err != nil {
				return
			}
			for _, cfg := range r.Configs {
				byMarket[cfg.Market] = cfg.Leverage.D()
			}
		}
		ps[i].Leverage = byMarket[ps[i].Market]
	}
}

// GetOrders implements connector.Adapter: GET /orders lists the open
// ones (NEW, UNTRIGGERED, OPEN).
func (a *Adapter) GetOrders(ctx context.Context, c connector.Credential, m *connector.Market) (contract.OrdersResult, error) {
	rows, err := a.openOrders(ctx, c, m)
	if err != nil {
		return contract.OrdersResult{}, err
	}
	out := make([]contract.Order, 0, len(rows))
	for _, o := range rows {
		out = append(out, orderFromWire(o))
	}
	return contract.OrdersResult{Orders: out}, nil
}

func (a *Adapter) openOrders(ctx context.Context, c connector.Credential, m *connector.Market) ([]orderResp, error) {
	var q url.Values
	if m != nil {
		q = marketQuery(*m)
	}
	var l list[orderResp]
	err := a.private(ctx, c, http.MethodGet, "/orders", q, nil, &l)
	return l.Results, err
}

// GetFills implements connector.Adapter: trades only (fill_type FILL,
// LIQUIDATION, RPI, BLOCK_TRADE), newest first.
func (a *Adapter) GetFills(ctx context.Context, c connector.Credential, m connector.Market, limit int) (contract.FillsResult, error) {
	rows, err := a.fills(ctx, c, marketQuery(m), limit)
	if err != nil {
		return contract.FillsResult{}, err
	}
	out := make([]contract.Fill, 0, len(rows))
	for _, f := range rows {
		out = append(out, fillFromWire(f))
	}
	return contract.FillsResult{Fills: out}, nil
}

func (a *Adapter) fills(ctx context.Context, c connector.Credential, q url.Values, limit int) ([]fillResp, error) {
	q.Set("page_size", strconv.Itoa(min(max(limit, 1), 5000)))
	var l list[fillResp]
	if err := a.private(ctx, c, http.MethodGet, "/fills", q, nil, &l); err != nil {
		return nil, err
	}
	var out []fillResp
	for _, f := range l.Results {
		switch f.FillType {
		case "TRANSFER", "SETTLE_MARKET":
			continue
		}
		out = append(out, f)
	}
	// The order of /fills is not documented: newest first, by time.
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt > out[j].CreatedAt })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// TestCredentials implements connector.Adapter by obtaining a JWT: a key
// or address Paradex refuses is valid:false.
func (a *Adapter) TestCredentials(ctx context.Context, c connector.Credential) (bool, error) {
	acct, err := decode(c)
	if err != nil {
		return false, connector.BadSecret(contract.Paradex)
	}
	// Always a new token: the key is what is being tested.
	h := a.c.host(a.base(c))
	if _, err := a.c.authenticate(ctx, h, acct); err != nil {
		return false, connector.RejectedBy(err)
	}
	return true, nil
}
