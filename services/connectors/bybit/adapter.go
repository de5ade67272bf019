package bybit

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Adapter implements connector.Adapter on Bybit v5 USDT perpetuals. It
// holds no venue state, only caches: clock offsets and quotas (client),
// instrument rules per host and position modes per credential and symbol.
type Adapter struct {
	cfg Config
	c   *client

	lists venuekit.Catalog[symbolMeta] // by REST base: markets and their market-order rules
	modes venuekit.Memo[bool]          // one-way mode seen, by base + apiKey + symbol
}

var (
	_ connector.Adapter        = (*Adapter)(nil)
	_ connector.LeverageReader = (*Adapter)(nil)
)

// modeTTL is how long a credential's one-way mode on a symbol is trusted.
const modeTTL = 5 * time.Minute

// NewAdapter returns an adapter for cfg; hc nil means connector.NewHTTPClient.
func NewAdapter(cfg Config, hc *http.Client) *Adapter {
	if hc == nil {
		hc = connector.NewHTTPClient(cfg.Timeout)
	}
	return &Adapter{
		cfg: cfg,
		c:   newClient(cfg, hc),
	}
}

// Exchange implements connector.Adapter.
func (a *Adapter) Exchange() contract.Exchange { return contract.Bybit }

// secret is a Bybit credential's secret (DESIGN §5). Demo marks a key made
// under the mainnet site's Demo Trading: it works only on the demo host.
type secret struct {
	APIKey    string `json:"apiKey"`
	APISecret string `json:"apiSecret"`
	Demo      bool   `json:"demo"`
}

func decodeSecret(c connector.Credential) (secret, error) {
	var s secret
	if len(c.Secret) == 0 || c.Secret.Decode(&s) != nil || s.APIKey == "" || s.APISecret == "" {
		return s, contract.Upstream(contract.ReasonAuthenticationFailed, "", "", "the Bybit credential lacks apiKey or apiSecret: store both")
	}
	return s, nil
}

func credKeys(c connector.Credential) (*keys, error) {
	s, err := decodeSecret(c)
	if err != nil {
		return nil, err
	}
	return &keys{Key: s.APIKey, Secret: s.APISecret}, nil
}

// demo reports whether the credential trades on Bybit's demo host.
func demo(c connector.Credential) bool {
	s, _ := decodeSecret(c)
	return c.Environment == contract.Testnet && s.Demo
}

func (a *Adapter) base(c connector.Credential) string {
	return a.cfg.baseURL(c.Environment, demo(c))
}

// public calls a market-data endpoint (no signature).
func (a *Adapter) public(ctx context.Context, c connector.Credential, path string, q params, out any) error {
	_, err := a.c.do(ctx, a.base(c), nil, request{method: http.MethodGet, path: path, query: q}, out)
	return err
}

// get calls a signed GET endpoint with the credential's keys.
func (a *Adapter) get(ctx context.Context, c connector.Credential, path string, q params, out any) error {
	k, err := credKeys(c)
	if err != nil {
		return err
	}
	_, err = a.c.do(ctx, a.base(c), k, request{method: http.MethodGet, path: path, query: q, signed: true}, out)
	return err
}

// post calls a signed POST endpoint with body as JSON.
func (a *Adapter) post(ctx context.Context, c connector.Credential, path string, body, out any) (envelope, error) {
	k, err := credKeys(c)
	if err != nil {
		return envelope{}, err
	}
	return a.c.do(ctx, a.base(c), k, request{method: http.MethodPost, path: path, body: body, signed: true}, out)
}

func linear() params { return params{}.Add("category", category) }

func symbolQuery(m connector.Market) params { return linear().Add("symbol", m.Native) }

// Markets implements connector.Adapter: every page of instruments-info
// (more than 500 linear symbols exist; 1000 a page), USDT perpetuals kept.
func (a *Adapter) Markets(ctx context.Context, c connector.Credential) ([]connector.Market, error) {
	var all []instrument
	cursor := ""
	for range 20 {
		q := linear().Add("limit", "1000")
		if cursor != "" {
			q = q.Add("cursor", cursor)
		}
		var page instrumentsPage
		if err := a.public(ctx, c, "/v5/market/instruments-info", q, &page); err != nil {
			return nil, err
		}
		all = append(all, page.List...)
		if cursor = page.NextPageCursor; cursor == "" {
			break
		}
	}
	list, meta := marketsFromInstruments(all)
	base := a.base(c)
	a.lists.Put(base, list, meta)
	return list, nil
}

func (a *Adapter) symbolMeta(c connector.Credential, native string) symbolMeta {
	m, _ := a.lists.Rules(a.base(c), native)
	return m
}

// GetOrderbook implements connector.Adapter (limit 1 to 1000 for linear).
func (a *Adapter) GetOrderbook(ctx context.Context, c connector.Credential, m connector.Market, n int) (contract.OrderbookResult, error) {
	var b book
	if err := a.public(ctx, c, "/v5/market/orderbook", symbolQuery(m).Add("limit", strconv.Itoa(min(max(n, 1), 1000))), &b); err != nil {
		return contract.OrderbookResult{}, err
	}
	return contract.OrderbookResult{Bids: levels(b.Bids, n), Asks: levels(b.Asks, n)}, nil
}

func (a *Adapter) ticker(ctx context.Context, c connector.Credential, m connector.Market) (ticker, error) {
	var t tickers
	if err := a.public(ctx, c, "/v5/market/tickers", symbolQuery(m), &t); err != nil {
		return ticker{}, err
	}
	for _, x := range t.List {
		if x.Symbol == m.Native {
			return x, nil
		}
	}
	return ticker{}, contract.Upstream(contract.ReasonUnknown, "", "", "Bybit's tickers answer has no %s", m.Native)
}

// GetMarkPrice implements connector.Adapter.
func (a *Adapter) GetMarkPrice(ctx context.Context, c connector.Credential, m connector.Market) (contract.MarkPriceResult, error) {
	t, err := a.ticker(ctx, c, m)
	return contract.MarkPriceResult{MarkPrice: t.MarkPrice.D(), IndexPrice: t.IndexPrice.D()}, err
}

// GetFundingRate implements connector.Adapter: the current interval's
// rate and when it is paid.
func (a *Adapter) GetFundingRate(ctx context.Context, c connector.Credential, m connector.Market) (contract.FundingRateResult, error) {
	t, err := a.ticker(ctx, c, m)
	return contract.FundingRateResult{FundingRate: t.FundingRate.D(), NextFundingTime: msToSeconds(t.NextFundingTime),
		FundingIntervalHours: a.fundingHours(c, t)}, err
}

// fundingHours is the interval a ticker's rate covers: the ticker's
// fundingIntervalHour, else the instrument's fundingInterval (minutes),
// else Bybit's usual 8 hours.
func (a *Adapter) fundingHours(c connector.Credential, t ticker) int {
	if h, err := strconv.Atoi(t.FundingIntervalHour); err == nil && h > 0 {
		return h
	}
	if m := a.symbolMeta(c, t.Symbol).fundingMinutes; m >= 60 {
		return m / 60
	}
	return 8
}

// GetCandles implements connector.Adapter. Bybit answers newest first
// (market/kline); the contract is oldest first.
func (a *Adapter) GetCandles(ctx context.Context, c connector.Credential, m connector.Market, minutes, limit int) (contract.CandlesResult, error) {
	iv, ok := intervals[minutes]
	if !ok {
		return contract.CandlesResult{}, contract.Errorf(contract.CodeInvalidRequest, "field \"interval\": Bybit has no %d-minute candles", minutes)
	}
	var k klines
	if err := a.public(ctx, c, "/v5/market/kline", symbolQuery(m).Add("interval", iv).Add("limit", strconv.Itoa(min(limit, 1000))), &k); err != nil {
		return contract.CandlesResult{}, err
	}
	out := make([]contract.Candle, 0, len(k.List))
	for i := len(k.List) - 1; i >= 0; i-- {
		if cd, ok := candleFromWire(k.List[i]); ok {
			out = append(out, cd)
		}
	}
	return contract.CandlesResult{Candles: out}, nil
}

// GetMarketsWithFunding implements connector.Adapter: every linear ticker
// in one call, kept to the listed USDT perpetuals.
func (a *Adapter) GetMarketsWithFunding(ctx context.Context, c connector.Credential) (contract.MarketsResult, error) {
	base := a.base(c)
	list, err := a.lists.Get(ctx, base, func(ctx context.Context) ([]connector.Market, error) { return a.Markets(ctx, c) })
	if err != nil {
		return contract.MarketsResult{}, err
	}
	var t tickers
	if err := a.public(ctx, c, "/v5/market/tickers", linear(), &t); err != nil {
		return contract.MarketsResult{}, err
	}
	byNative := map[string]ticker{}
	for _, x := range t.List {
		byNative[x.Symbol] = x
	}
	out := []contract.MarketEntry{}
	for _, m := range list {
		x, ok := byNative[m.Native]
		if !ok {
			continue
		}
		out = append(out, contract.MarketEntry{Symbol: m.Native, MarkPrice: x.MarkPrice.D(), FundingRate: x.FundingRate.D(),
			OpenInterest: new(x.OpenInterest.D()), FundingIntervalHours: a.fundingHours(c, x)})
	}
	return contract.MarketsResult{Markets: out}, nil
}

// GetFeeInfo implements connector.Adapter: the account's rates in basis
// points. Bybit's demo host has no fee-rate endpoint (demo page).
func (a *Adapter) GetFeeInfo(ctx context.Context, c connector.Credential, m connector.Market) (contract.FeeInfoResult, error) {
	if demo(c) {
		return contract.FeeInfoResult{}, contract.Upstream(contract.ReasonPermissionDenied, "", "",
			"Bybit demo trading has no fee-rate endpoint (GET /v5/account/fee-rate is not served on api-demo.bybit.com); "+
				"ask getFeeInfo with a mainnet or testnet credential")
	}
	var r feeRates
	if err := a.get(ctx, c, "/v5/account/fee-rate", symbolQuery(m), &r); err != nil {
		return contract.FeeInfoResult{}, err
	}
	for _, x := range r.List {
		if x.Symbol == m.Native || len(r.List) == 1 {
			return contract.FeeInfoResult{MakerFee: bps(x.MakerFeeRate.D()), TakerFee: bps(x.TakerFeeRate.D())}, nil
		}
	}
	return contract.FeeInfoResult{}, contract.Upstream(contract.ReasonUnknown, "", "", "Bybit's fee-rate answer has no %s", m.Native)
}

// GetBalance implements connector.Adapter from the unified account's
// totals in USD: equity totalEquity, free collateral totalAvailableBalance,
// account value totalMarginBalance (wallet plus perpetual unrealized PnL).
func (a *Adapter) GetBalance(ctx context.Context, c connector.Credential) (contract.BalanceResult, error) {
	var w wallet
	if err := a.get(ctx, c, "/v5/account/wallet-balance", params{}.Add("accountType", "UNIFIED"), &w); err != nil {
		return contract.BalanceResult{}, err
	}
	if len(w.List) == 0 {
		return contract.BalanceResult{}, contract.Upstream(contract.ReasonPermissionDenied, "", "",
			"Bybit has no unified trading account for this key; perpgate trades Bybit's unified account (UTA): upgrade the account")
	}
	x := w.List[0]
	return contract.BalanceResult{Equity: x.TotalEquity.D(), FreeCollateral: x.TotalAvailableBalance.D(), AccountValue: x.TotalMarginBalance.D()}, nil
}

// allPages reads a cursor-paginated signed list (position, order and
// execution lists), at most pages pages.
func allPages[T any](ctx context.Context, a *Adapter, c connector.Credential, path string, q params, pages int,
	read func(T) (n int, cursor string)) error {
	cursor := ""
	for range pages {
		p := q
		if cursor != "" {
			p = append(append(params{}, q...), connector.Param{Key: "cursor", Value: cursor})
		}
		var page T
		if err := a.get(ctx, c, path, p, &page); err != nil {
			return err
		}
		if _, cursor = read(page); cursor == "" {
			return nil
		}
	}
	return nil
}

// GetPositions implements connector.Adapter (position list; settleCoin
// USDT for all markets, which lists non-zero positions only).
func (a *Adapter) GetPositions(ctx context.Context, c connector.Credential, m *connector.Market) (contract.PositionsResult, error) {
	rows, err := a.positionRows(ctx, c, m)
	if err != nil {
		return contract.PositionsResult{}, err
	}
	out := []contract.Position{}
	for _, p := range rows {
		if p.Side != "" && p.Size.D().IsPositive() {
			out = append(out, positionFromWire(p))
		}
	}
	return contract.PositionsResult{Positions: out}, nil
}

// GetLeverage implements connector.LeverageReader: position/list of one
// symbol has its row, with the leverage, while the position is flat too.
func (a *Adapter) GetLeverage(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	rows, err := a.positionRows(ctx, c, &m)
	if err != nil {
		return 0, err
	}
	lev := 0
	for _, p := range rows {
		if p.Symbol == m.Native {
			lev = max(lev, int(p.Leverage.D().Ceil().IntPart()))
		}
	}
	return lev, nil
}

func (a *Adapter) positionRows(ctx context.Context, c connector.Credential, m *connector.Market) ([]position, error) {
	q := linear().Add("settleCoin", settle).Add("limit", "200")
	if m != nil {
		q = symbolQuery(*m).Add("limit", "200")
	}
	var rows []position
	err := allPages(ctx, a, c, "/v5/position/list", q, 10, func(p positions) (int, string) {
		rows = append(rows, p.List...)
		return len(p.List), p.NextPageCursor
	})
	return rows, err
}

// GetOrders implements connector.Adapter: open orders of every kind,
// active and conditional (order/realtime with openOnly=0).
func (a *Adapter) GetOrders(ctx context.Context, c connector.Credential, m *connector.Market) (contract.OrdersResult, error) {
	list, err := a.openOrders(ctx, c, m)
	if err != nil {
		return contract.OrdersResult{}, err
	}
	out := make([]contract.Order, 0, len(list))
	for _, o := range list {
		out = append(out, orderFromWire(o))
	}
	return contract.OrdersResult{Orders: out}, nil
}

func (a *Adapter) openOrders(ctx context.Context, c connector.Credential, m *connector.Market) ([]order, error) {
	q := linear().Add("settleCoin", settle).Add("limit", "50")
	if m != nil {
		q = symbolQuery(*m).Add("limit", "50")
	}
	var list []order
	err := allPages(ctx, a, c, "/v5/order/realtime", q, 20, func(p orders) (int, string) {
		list = append(list, p.List...)
		return len(p.List), p.NextPageCursor
	})
	return list, err
}

// GetFills implements connector.Adapter, newest first. execType=Trade
// leaves out the funding rows the execution list also carries.
func (a *Adapter) GetFills(ctx context.Context, c connector.Credential, m connector.Market, limit int) (contract.FillsResult, error) {
	out := []contract.Fill{}
	// At most 100 rows a call; nextPageCursor reads on (execution page).
	for cursor := ""; len(out) < limit; {
		q := symbolQuery(m).Add("execType", "Trade").Add("limit", strconv.Itoa(min(limit-len(out), 100)))
		if cursor != "" {
			q = q.Add("cursor", cursor)
		}
		var ex executions
		if err := a.get(ctx, c, "/v5/execution/list", q, &ex); err != nil {
			return contract.FillsResult{}, err
		}
		for _, e := range ex.List {
			if e.ExecType == "Trade" && len(out) < limit { // the filter is the venue's; keep funding out whatever it sends
				out = append(out, fillFromWire(e))
			}
		}
		if cursor = ex.NextPageCursor; cursor == "" || len(ex.List) == 0 {
			break
		}
	}
	return contract.FillsResult{Fills: out}, nil
}

// TestCredentials implements connector.Adapter with GET /v5/user/query-api
// (works with any permission), or GET /v5/account/info on the demo host,
// which lacks the former. A rejected key is valid:false.
func (a *Adapter) TestCredentials(ctx context.Context, c connector.Credential) (bool, error) {
	if _, err := credKeys(c); err != nil {
		return false, connector.BadSecret(contract.Bybit)
	}
	path := "/v5/user/query-api"
	if demo(c) {
		path = "/v5/account/info"
	}
	if err := a.get(ctx, c, path, nil, nil); err != nil {
		return false, connector.RejectedBy(err)
	}
	return true, nil
}

// oneWay refuses to trade a symbol the account holds in hedge mode: orders
// there need positionIdx 1 or 2, and the contract speaks of one position
// per market. The position list shows the mode: one row with positionIdx 0
// in one-way mode, two rows (1 and 2) in hedge mode (position page).
func (a *Adapter) oneWay(ctx context.Context, c connector.Credential, m connector.Market) error {
	k, err := credKeys(c)
	if err != nil {
		return err
	}
	key := a.base(c) + " " + k.Key + " " + m.Native
	if _, ok := a.modes.Get(key, a.c.Now(), modeTTL); ok {
		return nil
	}
	rows, err := a.positionRows(ctx, c, &m)
	if err != nil {
		return err
	}
	for _, p := range rows {
		if p.PositionIdx != 0 {
			return errHedgeMode(m)
		}
	}
	a.modes.Put(key, true, a.c.Now())
	return nil
}

func (a *Adapter) forgetMode(c connector.Credential, m connector.Market) {
	if k, err := credKeys(c); err == nil {
		a.modes.Forget(a.base(c) + " " + k.Key + " " + m.Native)
	}
}

func errHedgeMode(m connector.Market) error {
	return contract.Errorf(contract.CodeInvalidRequest,
		"the Bybit account holds %s in hedge mode (Both Sides, positionIdx 1 and 2); perpgate trades one-way mode only: "+
			"switch the position mode to One-Way for USDT perpetuals (POST /v5/position/switch-mode mode 0, or the Bybit app) with no open orders or position, and retry", m.Native)
}

// zero is a decimal zero for results that must never carry nil decimals.
var zero = decimal.Zero
