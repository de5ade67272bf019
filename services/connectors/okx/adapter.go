package okx

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Adapter implements connector.Adapter on OKX v5 USDT-margined swaps. It
// holds no venue state, only caches per REST base and environment:
// instrument rules, the last market list and account configurations.
type Adapter struct {
	cfg Config
	c   *client

	mu      sync.Mutex
	meta    map[string]map[string]instMeta // by scope, then instId
	lists   map[string][]connector.Market  // by scope
	configs map[string]configEntry         // by scope + apiKey
}

var (
	_ connector.Adapter          = (*Adapter)(nil)
	_ connector.ProtectionLinker = (*Adapter)(nil)
)

// configTTL is how long a credential's account configuration is trusted.
const configTTL = 5 * time.Minute

type configEntry struct {
	cfg accountConfig
	at  time.Time
}

// NewAdapter returns an adapter for cfg; hc nil means connector.NewHTTPClient.
func NewAdapter(cfg Config, hc *http.Client) *Adapter {
	if hc == nil {
		hc = connector.NewHTTPClient(cfg.Timeout)
	}
	return &Adapter{cfg: cfg, c: newClient(cfg, hc), meta: map[string]map[string]instMeta{},
		lists: map[string][]connector.Market{}, configs: map[string]configEntry{}}
}

// Exchange implements connector.Adapter.
func (a *Adapter) Exchange() contract.Exchange { return contract.OKX }

// LinksProtection implements connector.ProtectionLinker: a TP+SL pair is
// one oco algo order (one leg firing cancels the other) and every
// protection order carries cxlOnClosePos, so OKX cancels it when the
// position closes (fact sheet §5 placeProtectionOrders).
func (a *Adapter) LinksProtection() bool { return true }

// Secret is an OKX credential's secret (DESIGN §5): the API key, its
// secret and the passphrase chosen when the key was created.
type Secret struct {
	APIKey     string `json:"apiKey"`
	APISecret  string `json:"apiSecret"`
	Passphrase string `json:"passphrase"`
}

// String masks the secret.
func (Secret) String() string { return "[secret]" }

// GoString masks the secret.
func (Secret) GoString() string { return "[secret]" }

// LogValue masks the secret in slog output.
func (Secret) LogValue() slog.Value { return slog.StringValue("[secret]") }

func credKeys(c connector.Credential) (*keys, error) {
	var s Secret
	if len(c.Secret) == 0 || c.Secret.Decode(&s) != nil || s.APIKey == "" || s.APISecret == "" || s.Passphrase == "" {
		return nil, contract.Upstream(contract.ReasonAuthenticationFailed, "", "", "%v: store apiKey, apiSecret and passphrase", errNoKeys)
	}
	return &keys{apiKey: s.APIKey, secret: s.APISecret, passphrase: s.Passphrase}, nil
}

func (a *Adapter) base(c connector.Credential) string { return a.cfg.baseURL(c.Environment) }

// scope keys the caches: live and demo share a host but not instruments.
func (a *Adapter) scope(c connector.Credential) string {
	return a.base(c) + " " + string(c.Environment)
}

func demo(c connector.Credential) bool { return c.Environment == contract.Testnet }

// public calls an unsigned market-data endpoint.
func (a *Adapter) public(ctx context.Context, c connector.Credential, path string, q params, lim rule, out any) error {
	return a.c.do(ctx, a.base(c), nil, request{method: http.MethodGet, path: path, query: q, demo: demo(c), limit: lim, instID: instOf(q)}, out)
}

// get calls a private GET endpoint.
func (a *Adapter) get(ctx context.Context, c connector.Credential, path string, q params, lim rule, out any) error {
	k, err := credKeys(c)
	if err != nil {
		return err
	}
	return a.c.do(ctx, a.base(c), k, request{method: http.MethodGet, path: path, query: q, signed: true, demo: demo(c), limit: lim, instID: instOf(q)}, out)
}

// post calls a private POST endpoint with a JSON body.
func (a *Adapter) post(ctx context.Context, c connector.Credential, r request, out any) error {
	k, err := credKeys(c)
	if err != nil {
		return err
	}
	r.method, r.signed, r.demo = http.MethodPost, true, demo(c)
	return a.c.do(ctx, a.base(c), k, r, out)
}

func instOf(q params) string {
	for _, p := range q {
		if p.k == "instId" {
			return p.v
		}
	}
	return ""
}

func instParam(m connector.Market) params { return params{}.add("instId", m.Native) }

// Markets implements connector.Adapter: the live linear USDT swaps.
func (a *Adapter) Markets(ctx context.Context, c connector.Credential) ([]connector.Market, error) {
	var insts []instrument
	if err := a.public(ctx, c, "/api/v5/public/instruments", params{}.add("instType", "SWAP"), rule{n: 20}, &insts); err != nil {
		return nil, err
	}
	list, meta := marketsFromInstruments(insts)
	a.mu.Lock()
	a.meta[a.scope(c)], a.lists[a.scope(c)] = meta, list
	a.mu.Unlock()
	return list, nil
}

// inst returns an instrument's contract rules, reading the instruments
// when this adapter has not yet (the runtime may have cached the markets
// from another replica's answer).
func (a *Adapter) inst(ctx context.Context, c connector.Credential, instID string) (instMeta, error) {
	a.mu.Lock()
	im, ok := a.meta[a.scope(c)][instID]
	a.mu.Unlock()
	if ok {
		return im, nil
	}
	if _, err := a.Markets(ctx, c); err != nil {
		return instMeta{}, err
	}
	a.mu.Lock()
	im, ok = a.meta[a.scope(c)][instID]
	a.mu.Unlock()
	if !ok {
		return instMeta{}, contract.Errorf(contract.CodeUnknownMarket, "%s is not a live USDT swap on OKX", instID)
	}
	return im, nil
}

// GetOrderbook implements connector.Adapter; sizes become base units.
func (a *Adapter) GetOrderbook(ctx context.Context, c connector.Credential, m connector.Market, depth int) (contract.OrderbookResult, error) {
	im, err := a.inst(ctx, c, m.Native)
	if err != nil {
		return contract.OrderbookResult{}, err
	}
	var books []book
	if err := a.public(ctx, c, "/api/v5/market/books", instParam(m).add("sz", strconv.Itoa(min(max(depth, 1), 400))), rule{n: 40}, &books); err != nil {
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
	if err := a.public(ctx, c, "/api/v5/public/mark-price", params{}.add("instType", "SWAP").add("instId", m.Native), rule{n: 10, byInst: true}, &marks); err != nil {
		return contract.MarkPriceResult{}, err
	}
	var idx []indexTicker
	if err := a.public(ctx, c, "/api/v5/market/index-tickers", params{}.add("instId", im.family), rule{n: 20}, &idx); err != nil {
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
		q := instParam(m).add("bar", bar).add("limit", strconv.Itoa(min(limit-len(rows), candlesPerCall)))
		if after != "" {
			q = q.add("after", after)
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
	return contract.FundingRateResult{FundingRate: rates[0].FundingRate.Decimal, NextFundingTime: int64(rates[0].FundingTime) / 1000}, nil
}

// GetMarketsWithFunding implements connector.Adapter with three bulk
// calls joined by instId: mark prices, funding rates (instId=ANY) and open
// interest in coins (oiCcy).
func (a *Adapter) GetMarketsWithFunding(ctx context.Context, c connector.Credential) (contract.MarketsResult, error) {
	a.mu.Lock()
	list := a.lists[a.scope(c)]
	a.mu.Unlock()
	if list == nil {
		var err error
		if list, err = a.Markets(ctx, c); err != nil {
			return contract.MarketsResult{}, err
		}
	}
	var marks []markPrice
	if err := a.public(ctx, c, "/api/v5/public/mark-price", params{}.add("instType", "SWAP"), rule{n: 10}, &marks); err != nil {
		return contract.MarketsResult{}, err
	}
	var rates []fundingRate
	if err := a.public(ctx, c, "/api/v5/public/funding-rate", params{}.add("instId", "ANY"), rule{n: 10}, &rates); err != nil {
		return contract.MarketsResult{}, err
	}
	var ois []openInterest
	if err := a.public(ctx, c, "/api/v5/public/open-interest", params{}.add("instType", "SWAP"), rule{n: 20}, &ois); err != nil {
		return contract.MarketsResult{}, err
	}
	mark, rate, oi := map[string]decimal.Decimal{}, map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	for _, x := range marks {
		mark[x.InstID] = x.MarkPx.Decimal
	}
	for _, x := range rates {
		rate[x.InstID] = x.FundingRate.Decimal
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
		out = append(out, contract.MarketEntry{Symbol: m.Native, MarkPrice: px, FundingRate: rate[m.Native], OpenInterest: oi[m.Native]})
	}
	return contract.MarketsResult{Markets: out}, nil
}

// GetFeeInfo implements connector.Adapter: the account's rates for the
// instrument's fee group (fact sheet §0 #6), in basis points charged.
func (a *Adapter) GetFeeInfo(ctx context.Context, c connector.Credential, m connector.Market) (contract.FeeInfoResult, error) {
	im, err := a.inst(ctx, c, m.Native)
	if err != nil {
		return contract.FeeInfoResult{}, err
	}
	var fees []tradeFee
	if err := a.get(ctx, c, "/api/v5/account/trade-fee", params{}.add("instType", "SWAP").add("instFamily", im.family), rule{n: 5}, &fees); err != nil {
		return contract.FeeInfoResult{}, err
	}
	if len(fees) == 0 {
		return contract.FeeInfoResult{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "OKX answered no fee rates for %s", im.family)
	}
	f := fees[0]
	maker, taker := f.Maker.Decimal, f.Taker.Decimal
	for _, g := range f.FeeGroup {
		if g.GroupID == im.groupID || (im.groupID == "" && len(f.FeeGroup) == 1) {
			maker, taker = g.Maker.Decimal, g.Taker.Decimal
		}
	}
	if maker.IsZero() && taker.IsZero() { // accounts still on the deprecated fields
		maker, taker = f.MakerU.Decimal, f.TakerU.Decimal
	}
	return contract.FeeInfoResult{MakerFee: bps(maker), TakerFee: bps(taker)}, nil
}

// GetBalance implements connector.Adapter: equity is totalEq (USD);
// accountValue and freeCollateral are the USDT detail's eq and availEq,
// the margin of USDT swaps (fact sheet §5; availBal when availEq is empty).
func (a *Adapter) GetBalance(ctx context.Context, c connector.Credential) (contract.BalanceResult, error) {
	var bs []balance
	if err := a.get(ctx, c, "/api/v5/account/balance", nil, rule{n: 10}, &bs); err != nil {
		return contract.BalanceResult{}, err
	}
	res := contract.BalanceResult{Equity: decimal.Zero, FreeCollateral: decimal.Zero, AccountValue: decimal.Zero}
	if len(bs) == 0 {
		return res, nil
	}
	res.Equity, res.AccountValue = bs[0].TotalEq.Decimal, bs[0].TotalEq.Decimal
	for _, d := range bs[0].Details {
		if d.Ccy != quote {
			continue
		}
		res.AccountValue, res.FreeCollateral = d.Eq.Decimal, d.AvailEq.Decimal
		if d.AvailEq.IsZero() {
			res.FreeCollateral = d.AvailBal.Decimal
		}
	}
	return res, nil
}

// GetPositions implements connector.Adapter; sizes become base units.
func (a *Adapter) GetPositions(ctx context.Context, c connector.Credential, m *connector.Market) (contract.PositionsResult, error) {
	rows, err := a.positions(ctx, c, m)
	if err != nil {
		return contract.PositionsResult{}, err
	}
	out := []contract.Position{}
	for _, p := range rows {
		if p.Pos.IsZero() {
			continue
		}
		im, err := a.inst(ctx, c, p.InstID)
		if err != nil {
			continue // not a USDT swap
		}
		out = append(out, positionFromWire(p, im))
	}
	return contract.PositionsResult{Positions: out}, nil
}

func (a *Adapter) positions(ctx context.Context, c connector.Credential, m *connector.Market) ([]position, error) {
	q := params{}.add("instType", "SWAP")
	if m != nil {
		q = q.add("instId", m.Native)
	}
	var rows []position
	err := a.get(ctx, c, "/api/v5/account/positions", q, rule{n: 10}, &rows)
	return rows, err
}

// GetOrders implements connector.Adapter: regular pending orders and the
// algo orders the connector places (trigger stops, conditional and oco
// protection), which OKX lists apart and by ordType.
func (a *Adapter) GetOrders(ctx context.Context, c connector.Credential, m *connector.Market) (contract.OrdersResult, error) {
	regular, algos, err := a.openOrders(ctx, c, m)
	if err != nil {
		return contract.OrdersResult{}, err
	}
	out := make([]contract.Order, 0, len(regular)+len(algos))
	for _, o := range regular {
		if im, err := a.inst(ctx, c, o.InstID); err == nil {
			out = append(out, orderFromWire(o, im))
		}
	}
	for _, o := range algos {
		if im, err := a.inst(ctx, c, o.InstID); err == nil {
			out = append(out, algoFromWire(o, im))
		}
	}
	return contract.OrdersResult{Orders: out}, nil
}

// algoTypes are the algo order types the connector places and lists.
var algoTypes = []string{"trigger", "conditional", "oco"}

// pageSize is the most orders one pending-list call answers.
const pageSize = 100

func (a *Adapter) openOrders(ctx context.Context, c connector.Credential, m *connector.Market) ([]order, []algoOrder, error) {
	base := params{}.add("instType", "SWAP")
	if m != nil {
		base = base.add("instId", m.Native)
	}
	var regular []order
	for after := ""; ; {
		q := base.add("limit", strconv.Itoa(pageSize))
		if after != "" {
			q = q.add("after", after)
		}
		var page []order
		if err := a.get(ctx, c, "/api/v5/trade/orders-pending", q, rule{n: 60}, &page); err != nil {
			return nil, nil, err
		}
		regular = append(regular, page...)
		if len(page) < pageSize {
			break
		}
		after = page[len(page)-1].OrdID
	}
	var algos []algoOrder
	for _, t := range algoTypes {
		for after := ""; ; {
			q := params{}.add("ordType", t).add("instType", "SWAP")
			if m != nil {
				q = q.add("instId", m.Native)
			}
			q = q.add("limit", strconv.Itoa(pageSize))
			if after != "" {
				q = q.add("after", after)
			}
			var page []algoOrder
			if err := a.get(ctx, c, "/api/v5/trade/orders-algo-pending", q, rule{n: 20}, &page); err != nil {
				return nil, nil, err
			}
			algos = append(algos, page...)
			if len(page) < pageSize {
				break
			}
			after = page[len(page)-1].AlgoID
		}
	}
	return regular, algos, nil
}

// fillsPerCall is the most fills /trade/fills answers.
const fillsPerCall = 100

// GetFills implements connector.Adapter, newest first as OKX answers;
// past 100 the next page starts after the last billId.
func (a *Adapter) GetFills(ctx context.Context, c connector.Credential, m connector.Market, limit int) (contract.FillsResult, error) {
	im, err := a.inst(ctx, c, m.Native)
	if err != nil {
		return contract.FillsResult{}, err
	}
	out := []contract.Fill{}
	for after := ""; len(out) < limit; {
		q := params{}.add("instType", "SWAP").add("instId", m.Native).add("limit", strconv.Itoa(min(limit-len(out), fillsPerCall)))
		if after != "" {
			q = q.add("after", after)
		}
		var page []fill
		if err := a.get(ctx, c, "/api/v5/trade/fills", q, rule{n: 60}, &page); err != nil {
			return contract.FillsResult{}, err
		}
		for _, f := range page {
			out = append(out, fillFromWire(f, im))
		}
		if len(page) < fillsPerCall {
			break
		}
		after = page[len(page)-1].BillID
	}
	return contract.FillsResult{Fills: out}, nil
}

// TestCredentials implements connector.Adapter with GET
// /api/v5/account/config, a signed read that checks key, secret and
// passphrase; a rejected credential is valid:false. An account that
// cannot trade swaps is still valid: trading says what to change.
func (a *Adapter) TestCredentials(ctx context.Context, c connector.Credential) (bool, error) {
	k, err := credKeys(c)
	if err != nil {
		return false, nil
	}
	if _, err := a.accountConfig(ctx, c, k); err != nil {
		if ce, ok := contract.AsError(err); ok && ce.Code == contract.CodeExchangeError &&
			(ce.Reason == contract.ReasonAuthenticationFailed || ce.Reason == contract.ReasonPermissionDenied) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func (a *Adapter) accountConfig(ctx context.Context, c connector.Credential, k *keys) (accountConfig, error) {
	var cfgs []accountConfig
	if err := a.c.do(ctx, a.base(c), k, request{method: http.MethodGet, path: "/api/v5/account/config", signed: true, demo: demo(c), limit: rule{n: 5}}, &cfgs); err != nil {
		return accountConfig{}, err
	}
	if len(cfgs) == 0 {
		return accountConfig{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "OKX answered /api/v5/account/config without data")
	}
	a.mu.Lock()
	a.configs[a.scope(c)+" "+k.apiKey] = configEntry{cfg: cfgs[0], at: a.c.now()}
	a.mu.Unlock()
	return cfgs[0], nil
}

// tradable refuses to trade for an account that cannot trade swaps the
// way the connector does (fact sheet §8): Spot mode (acctLv 1) cannot
// trade swaps at all, and long/short position mode needs posSide on every
// order where the contract speaks of one position per market. The
// configuration is cached per credential for configTTL.
func (a *Adapter) tradable(ctx context.Context, c connector.Credential) error {
	k, err := credKeys(c)
	if err != nil {
		return err
	}
	key := a.scope(c) + " " + k.apiKey
	a.mu.Lock()
	e, ok := a.configs[key]
	a.mu.Unlock()
	if !ok || a.c.now().Sub(e.at) >= configTTL {
		if e.cfg, err = a.accountConfig(ctx, c, k); err != nil {
			return err
		}
	}
	switch {
	case e.cfg.AcctLv == "1":
		return contract.Upstream(contract.ReasonPermissionDenied, "", "acctLv=1",
			"the OKX account is in Spot mode (acctLv 1), which cannot trade perpetual swaps: switch the account mode to "+
				"Futures mode (or Multi-currency margin) in OKX's trading settings (Settings > Account mode) and retry")
	case e.cfg.PosMode == "long_short_mode":
		return contract.Upstream(contract.ReasonPermissionDenied, "", "posMode=long_short_mode",
			"the OKX account is in long/short position mode; perpgate trades one position per market: switch the "+
				"position mode to One-way (net_mode) in OKX's trading settings (no open orders or positions) and retry")
	}
	return nil
}

// forgetConfig drops a cached account configuration after OKX said the
// account mode does not allow an order (51010).
func (a *Adapter) forgetConfig(c connector.Credential) {
	k, err := credKeys(c)
	if err != nil {
		return
	}
	a.mu.Lock()
	delete(a.configs, a.scope(c)+" "+k.apiKey)
	a.mu.Unlock()
}
