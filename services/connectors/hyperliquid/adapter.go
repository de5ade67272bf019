package hyperliquid

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Adapter implements connector.Adapter for Hyperliquid perps. It keeps no
// venue state: only per-process nonces, the weight budget and the asset
// index cache, so replicas are interchangeable.
type Adapter struct {
	cfg    Config
	client *client
	nonces NonceSource
	now    func() time.Time
	limits *addressLimits

	mu     sync.Mutex
	assets map[contract.Environment]*assetSet
}

var (
	_ connector.Adapter        = (*Adapter)(nil)
	_ connector.LeverageReader = (*Adapter)(nil)
)

// assetSet is one environment's universe: coin → asset id and decimals.
type assetSet struct {
	fetched time.Time
	byCoin  map[string]assetInfo
}

type assetInfo struct {
	index       int
	szDecimals  int
	maxLeverage int
}

// Option changes how NewAdapter builds an adapter.
type Option func(*Adapter)

// WithNonces makes the adapter sign with nonces from src. Replicas that may
// sign for the same agent must share one (RedisNonces); the default is an
// in-process Nonces, right for a single process.
func WithNonces(src NonceSource) Option { return func(a *Adapter) { a.nonces = src } }

// WithClock sets the adapter's clock (candle windows, funding times, the
// per-address cool-down); the default is time.Now.
func WithClock(now func() time.Time) Option { return func(a *Adapter) { a.now = now } }

// NewAdapter returns an adapter using h for upstream calls (nil: a
// connector.NewHTTPClient with cfg.Timeout). cfg must be valid (LoadConfig
// checks it); zero fields take the defaults.
func NewAdapter(cfg Config, h *http.Client, opts ...Option) *Adapter {
	def := DefaultConfig()
	cfg.WeightPerMinute, cfg.Timeout = venuekit.OrPositive(cfg.WeightPerMinute, def.WeightPerMinute), venuekit.OrPositive(cfg.Timeout, def.Timeout)
	if !cfg.Slippage.IsPositive() {
		cfg.Slippage = def.Slippage
	}
	if h == nil {
		h = connector.NewHTTPClient(cfg.Timeout)
	}
	a := &Adapter{cfg: cfg, client: newClient(h, cfg.WeightPerMinute), now: time.Now,
		assets: map[contract.Environment]*assetSet{}}
	for _, o := range opts {
		o(a)
	}
	if a.nonces == nil {
		a.nonces = NewNonces(a.now)
	}
	a.limits = newAddressLimits(a.now)
	return a
}

// stopSlippage is the worst-price distance of trigger orders: the venue's
// market TP/SL default tolerance (fact sheet §7, FAQ).
var stopSlippage = decimal.RequireFromString("0.1")

// Exchange implements connector.Adapter.
func (a *Adapter) Exchange() contract.Exchange { return contract.Hyperliquid }

// base is the REST base of the credential's environment, or the override.
func (a *Adapter) base(c connector.Credential) string {
	if a.cfg.URL != "" {
		return strings.TrimRight(a.cfg.URL, "/")
	}
	if c.Environment == contract.Mainnet {
		return MainnetURL
	}
	return TestnetURL
}

// secret is a Hyperliquid credential's secret (DESIGN §5).
type secret struct {
	AccountAddress  string `json:"accountAddress"`
	AgentPrivateKey string `json:"agentPrivateKey"`
	VaultAddress    string `json:"vaultAddress"`
}

// account is a parsed credential: whom to read (user), who signs (agent).
type account struct {
	user     string // vault if set, else the account address; lowercase
	master   string // the account address, lowercase
	key      *secp256k1.PrivateKey
	agent    string
	vault    []byte  // nil unless trading for a vault or sub-account
	vaultStr *string // as sent in the body
	mainnet  bool    // from the credential, never from the URL (fact sheet §1)
}

func (a *Adapter) account(c connector.Credential) (*account, error) {
	var s secret
	bad := func(what string) error {
		return contract.Upstream(contract.ReasonAuthenticationFailed, "", "", "hyperliquid credential secret: %s", what)
	}
	if err := c.Secret.Decode(&s); err != nil {
		return nil, bad("not a JSON object")
	}
	if _, err := ParseAddress(s.AccountAddress); err != nil || !strings.HasPrefix(s.AccountAddress, "0x") {
		return nil, bad("accountAddress must be a 0x address")
	}
	key, err := ParsePrivateKey(s.AgentPrivateKey)
	if err != nil {
		return nil, bad(err.Error())
	}
	acct := &account{master: strings.ToLower(s.AccountAddress), key: key, agent: Address(key.PubKey()),
		mainnet: c.Environment == contract.Mainnet}
	acct.user = acct.master
	if s.VaultAddress != "" {
		if acct.vault, err = ParseAddress(s.VaultAddress); err != nil {
			return nil, bad("vaultAddress must be a 0x address")
		}
		v := strings.ToLower(s.VaultAddress)
		acct.user, acct.vaultStr = v, &v
	}
	return acct, nil
}

// userInfo posts an /info request of typ about the credential's user;
// kv are more fields, name then value.
func (a *Adapter) userInfo(ctx context.Context, c connector.Credential, out any, typ string, kv ...any) error {
	acct, err := a.account(c)
	if err != nil {
		return err
	}
	body := map[string]any{"type": typ, "user": acct.user}
	for i := 0; i+1 < len(kv); i += 2 {
		body[kv[i].(string)] = kv[i+1]
	}
	return a.info(ctx, c, body, out)
}

// info posts one /info request; body must carry "type".
func (a *Adapter) info(ctx context.Context, c connector.Credential, body map[string]any, out any) error {
	typ, _ := body["type"].(string)
	return a.client.post(ctx, a.base(c)+"/info", infoWeight(typ), body, out)
}

// send signs an action for the credential and posts it. A rejection for
// the nonce alone (the venue's clock disagrees, or an unshared nonce source
// collided) is retried once with a fresh nonce: the venue executed nothing.
// While the venue throttles the account's address, actions of the same
// class are refused here without spending a request (addressLimits).
func (a *Adapter) send(ctx context.Context, c connector.Credential, acct *account, action any, n int) (OkResponse, error) {
	class := limitClass(action)
	if err := a.limits.check(c.Environment, acct.user, class); err != nil {
		return OkResponse{}, err
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return OkResponse{}, err
		}
		nonce, err := a.nonces.Next(ctx, acct.agent)
		if err != nil {
			return OkResponse{}, err
		}
		h, err := ActionHash(action, nonce, acct.vault, nil)
		if err != nil {
			return OkResponse{}, err
		}
		req := ExchangeRequest{Action: action, Nonce: nonce, Signature: SignL1(acct.key, h, acct.mainnet), VaultAddress: acct.vaultStr}
		var resp ExchangeResponse
		if err := a.client.post(ctx, a.base(c)+"/exchange", exchangeWeight(n), req, &resp); err != nil {
			return OkResponse{}, err
		}
		if resp.Status == "err" {
			var msg string
			if json.Unmarshal(resp.Response, &msg) != nil {
				msg = string(resp.Response)
			}
			if attempt == 0 && isNonceError(msg) {
				continue
			}
			if isAddressLimit(msg) {
				a.limits.throttled(c.Environment, acct.user, class)
			}
			return OkResponse{}, venueError(msg)
		}
		var ok OkResponse
		if resp.Status != "ok" || json.Unmarshal(resp.Response, &ok) != nil {
			return OkResponse{}, contract.Upstream(contract.ReasonUnknown, "", "", "hyperliquid answered with an unexpected body")
		}
		return ok, nil
	}
}

// statuses returns the n per-item statuses of an ok answer.
func statuses(ok OkResponse, n int) ([]Status, error) {
	if ok.Data == nil || len(ok.Data.Statuses) != n {
		return nil, fmt.Errorf("%w: want %d", errEmpty, n)
	}
	return ok.Data.Statuses, nil
}

// asset returns the asset id and decimals of a coin, refreshing the
// universe when the coin is unknown (new listing) at most every 30 s.
func (a *Adapter) asset(ctx context.Context, c connector.Credential, coin string) (assetInfo, error) {
	a.mu.Lock()
	s := a.assets[c.Environment]
	a.mu.Unlock()
	if s != nil {
		if info, ok := s.byCoin[coin]; ok {
			return info, nil
		}
		if a.now().Sub(s.fetched) < 30*time.Second {
			return assetInfo{}, contract.Errorf(contract.CodeUnknownMarket, "market %s is not listed on hyperliquid", coin)
		}
	}
	if _, err := a.fetchMeta(ctx, c); err != nil {
		return assetInfo{}, err
	}
	a.mu.Lock()
	s = a.assets[c.Environment]
	a.mu.Unlock()
	if info, ok := s.byCoin[coin]; ok {
		return info, nil
	}
	return assetInfo{}, contract.Errorf(contract.CodeUnknownMarket, "market %s is not listed on hyperliquid", coin)
}

// fetchMeta reads the universe and refreshes the asset cache. The asset id
// is the index in the full universe, delisted entries included (§6).
func (a *Adapter) fetchMeta(ctx context.Context, c connector.Credential) (Meta, error) {
	var meta Meta
	if err := a.info(ctx, c, map[string]any{"type": "meta"}, &meta); err != nil {
		return Meta{}, err
	}
	s := &assetSet{fetched: a.now(), byCoin: map[string]assetInfo{}}
	for i, u := range meta.Universe {
		s.byCoin[u.Name] = assetInfo{index: i, szDecimals: u.SzDecimals, maxLeverage: u.MaxLeverage}
	}
	a.mu.Lock()
	a.assets[c.Environment] = s
	a.mu.Unlock()
	return meta, nil
}

// Markets implements connector.Adapter.
func (a *Adapter) Markets(ctx context.Context, c connector.Credential) ([]connector.Market, error) {
	meta, err := a.fetchMeta(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make([]connector.Market, 0, len(meta.Universe))
	for _, u := range meta.Universe {
		if u.IsDelisted {
			continue
		}
		if m, ok := marketFromMeta(u); ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// assetCtxs reads metaAndAssetCtxs: [meta, ctxs], ctxs aligned with the universe.
func (a *Adapter) assetCtxs(ctx context.Context, c connector.Credential) (Meta, []AssetCtx, error) {
	var pair []json.RawMessage
	if err := a.info(ctx, c, map[string]any{"type": "metaAndAssetCtxs"}, &pair); err != nil {
		return Meta{}, nil, err
	}
	var meta Meta
	var ctxs []AssetCtx
	if len(pair) != 2 || json.Unmarshal(pair[0], &meta) != nil || json.Unmarshal(pair[1], &ctxs) != nil || len(ctxs) != len(meta.Universe) {
		return Meta{}, nil, contract.Upstream(contract.ReasonUnknown, "", "", "hyperliquid metaAndAssetCtxs has an unexpected shape")
	}
	return meta, ctxs, nil
}

func (a *Adapter) assetCtx(ctx context.Context, c connector.Credential, coin string) (AssetCtx, error) {
	meta, ctxs, err := a.assetCtxs(ctx, c)
	if err != nil {
		return AssetCtx{}, err
	}
	for i, u := range meta.Universe {
		if u.Name == coin {
			return ctxs[i], nil
		}
	}
	return AssetCtx{}, contract.Errorf(contract.CodeUnknownMarket, "market %s is not listed on hyperliquid", coin)
}

// GetOrderbook implements connector.Adapter.
func (a *Adapter) GetOrderbook(ctx context.Context, c connector.Credential, m connector.Market, depth int) (contract.OrderbookResult, error) {
	var book *L2Book
	if err := a.info(ctx, c, map[string]any{"type": "l2Book", "coin": m.Native}, &book); err != nil {
		return contract.OrderbookResult{}, err
	}
	if book == nil { // null for an unknown coin
		return contract.OrderbookResult{}, contract.Errorf(contract.CodeUnknownMarket, "market %s is not listed on hyperliquid", m.Canonical)
	}
	side := func(ls []L2Level) []contract.Level {
		out := make([]contract.Level, 0, min(len(ls), depth))
		for _, l := range ls[:min(len(ls), depth)] {
			out = append(out, contract.Level{dec(l.Px), dec(l.Sz)})
		}
		return out
	}
	return contract.OrderbookResult{Bids: side(book.Levels[0]), Asks: side(book.Levels[1])}, nil
}

// GetMarkPrice implements connector.Adapter: index is the oracle price.
func (a *Adapter) GetMarkPrice(ctx context.Context, c connector.Credential, m connector.Market) (contract.MarkPriceResult, error) {
	x, err := a.assetCtx(ctx, c, m.Native)
	if err != nil {
		return contract.MarkPriceResult{}, err
	}
	return contract.MarkPriceResult{MarkPrice: dec(x.MarkPx), IndexPrice: dec(x.OraclePx)}, nil
}

// GetCandles implements connector.Adapter.
func (a *Adapter) GetCandles(ctx context.Context, c connector.Credential, m connector.Market, interval, limit int) (contract.CandlesResult, error) {
	name, ok := intervals[interval]
	if !ok {
		return contract.CandlesResult{}, contract.Errorf(contract.CodeInvalidRequest, "interval %d is not offered by hyperliquid", interval)
	}
	end := a.now().UnixMilli()
	start := end - int64(limit)*int64(interval)*60_000
	var bars []CandleWire
	req := map[string]any{"coin": m.Native, "interval": name, "startTime": start, "endTime": end}
	if err := a.info(ctx, c, map[string]any{"type": "candleSnapshot", "req": req}, &bars); err != nil {
		return contract.CandlesResult{}, err
	}
	if len(bars) > limit {
		bars = bars[len(bars)-limit:]
	}
	out := make([]contract.Candle, len(bars))
	for i, b := range bars {
		out[i] = contract.Candle{Time: b.T / 1000, Open: dec(b.O), High: dec(b.H), Low: dec(b.L), Close: dec(b.C), Volume: dec(b.V)}
	}
	return contract.CandlesResult{Candles: out}, nil
}

// GetFundingRate implements connector.Adapter: funding is hourly, paid at
// every whole UTC hour.
func (a *Adapter) GetFundingRate(ctx context.Context, c connector.Credential, m connector.Market) (contract.FundingRateResult, error) {
	x, err := a.assetCtx(ctx, c, m.Native)
	if err != nil {
		return contract.FundingRateResult{}, err
	}
	next := (a.now().Unix()/3600 + 1) * 3600
	return contract.FundingRateResult{FundingRate: dec(x.Funding), NextFundingTime: next, FundingIntervalHours: 1}, nil
}

// GetMarketsWithFunding implements connector.Adapter; open interest is in
// base units.
func (a *Adapter) GetMarketsWithFunding(ctx context.Context, c connector.Credential) (contract.MarketsResult, error) {
	meta, ctxs, err := a.assetCtxs(ctx, c)
	if err != nil {
		return contract.MarketsResult{}, err
	}
	out := []contract.MarketEntry{}
	for i, u := range meta.Universe {
		if u.IsDelisted {
			continue
		}
		out = append(out, contract.MarketEntry{Symbol: u.Name, MarkPrice: dec(ctxs[i].MarkPx),
			FundingRate: dec(ctxs[i].Funding), OpenInterest: new(dec(ctxs[i].OpenInterest)), FundingIntervalHours: 1})
	}
	return contract.MarketsResult{Markets: out}, nil
}

var bps = decimal.NewFromInt(10000)

// GetFeeInfo implements connector.Adapter: the user's rates with discounts
// applied, in basis points.
func (a *Adapter) GetFeeInfo(ctx context.Context, c connector.Credential, _ connector.Market) (contract.FeeInfoResult, error) {
	var f UserFees
	if err := a.userInfo(ctx, c, &f, "userFees"); err != nil {
		return contract.FeeInfoResult{}, err
	}
	return contract.FeeInfoResult{MakerFee: dec(f.UserAddRate).Mul(bps), TakerFee: dec(f.UserCrossRate).Mul(bps)}, nil
}

func (a *Adapter) clearinghouse(ctx context.Context, c connector.Credential) (ClearinghouseState, error) {
	var s ClearinghouseState
	err := a.userInfo(ctx, c, &s, "clearinghouseState", "dex", "")
	return s, err
}

// GetBalance implements connector.Adapter.
func (a *Adapter) GetBalance(ctx context.Context, c connector.Credential) (contract.BalanceResult, error) {
	s, err := a.clearinghouse(ctx, c)
	if err != nil {
		return contract.BalanceResult{}, err
	}
	v := dec(s.MarginSummary.AccountValue)
	return contract.BalanceResult{ExchangeType: contract.Hyperliquid, Equity: v, AccountValue: v, FreeCollateral: dec(s.Withdrawable)}, nil
}

// GetPositions implements connector.Adapter.
func (a *Adapter) GetPositions(ctx context.Context, c connector.Credential, m *connector.Market) (contract.PositionsResult, error) {
	s, err := a.clearinghouse(ctx, c)
	if err != nil {
		return contract.PositionsResult{}, err
	}
	out := []contract.Position{}
	for _, p := range s.AssetPositions {
		if (m != nil && p.Position.Coin != m.Native) || dec(p.Position.Szi).IsZero() {
			continue
		}
		out = append(out, positionFromWire(p.Position))
	}
	return contract.PositionsResult{Positions: out}, nil
}

// GetLeverage implements connector.LeverageReader: the info request
// activeAssetData carries the account's leverage on one coin, position or
// not.
func (a *Adapter) GetLeverage(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	var r struct {
		Leverage Leverage `json:"leverage"`
	}
	if err := a.userInfo(ctx, c, &r, "activeAssetData", "coin", m.Native); err != nil {
		return 0, err
	}
	return r.Leverage.Value, nil
}

func (a *Adapter) openOrders(ctx context.Context, c connector.Credential) ([]FrontendOrder, error) {
	var os []FrontendOrder
	err := a.userInfo(ctx, c, &os, "frontendOpenOrders", "dex", "")
	return os, err
}

// GetOrders implements connector.Adapter.
func (a *Adapter) GetOrders(ctx context.Context, c connector.Credential, m *connector.Market) (contract.OrdersResult, error) {
	os, err := a.openOrders(ctx, c)
	if err != nil {
		return contract.OrdersResult{}, err
	}
	out := []contract.Order{}
	for _, o := range os {
		if m == nil || o.Coin == m.Native {
			out = append(out, orderFromWire(o))
		}
	}
	return contract.OrdersResult{Orders: out}, nil
}

// GetFills implements connector.Adapter: the most recent fills, newest
// first, filtered by coin here (the venue has no coin filter).
func (a *Adapter) GetFills(ctx context.Context, c connector.Credential, m connector.Market, limit int) (contract.FillsResult, error) {
	var fs []UserFill
	if err := a.userInfo(ctx, c, &fs, "userFills"); err != nil {
		return contract.FillsResult{}, err
	}
	out := []contract.Fill{}
	for _, f := range fs {
		if f.Coin == m.Native && len(out) < limit {
			out = append(out, fillFromWire(f))
		}
	}
	return contract.FillsResult{Fills: out}, nil
}

// TestCredentials implements connector.Adapter. Hyperliquid has no signed
// read, so it asks userRole about the agent: valid when the agent is
// approved for this account (or the key is the account's own). A noop
// action would only show the key is some agent, of any account.
func (a *Adapter) TestCredentials(ctx context.Context, c connector.Credential) (bool, error) {
	acct, err := a.account(c)
	if err != nil {
		return false, connector.BadSecret(contract.Hyperliquid)
	}
	var role UserRole
	if err := a.info(ctx, c, map[string]any{"type": "userRole", "user": acct.agent}, &role); err != nil {
		return false, connector.RejectedBy(err)
	}
	switch {
	case acct.agent == acct.master && role.Role != "user":
		return false, connector.Rejected("UNKNOWN_ACCOUNT",
			"hyperliquid knows no account %s (its role is %q): deposit to it first, or check accountAddress", acct.master, role.Role)
	case acct.agent == acct.master:
		return true, nil
	case role.Role != "agent" || role.Data == nil || !strings.EqualFold(role.Data.User, acct.master):
		return false, connector.Rejected("AGENT_NOT_APPROVED",
			"the key's address %s is not an API wallet (agent) approved by account %s: approve it on hyperliquid's API page, or store the agent of that account", acct.agent, acct.master)
	}
	return true, nil
}

// mid returns the coin's mid price from allMids.
func (a *Adapter) mid(ctx context.Context, c connector.Credential, coin string) (decimal.Decimal, error) {
	var mids map[string]string
	if err := a.info(ctx, c, map[string]any{"type": "allMids"}, &mids); err != nil {
		return decimal.Zero, err
	}
	px := dec(mids[coin])
	if !px.IsPositive() {
		return decimal.Zero, contract.Upstream(contract.ReasonInvalidOrder, "", "", "hyperliquid has no mid price for %s", coin)
	}
	return px, nil
}

// slipped is the IOC bound of a market order: mid × (1 ± slippage), rounded
// toward the mid so the bound is never exceeded.
func slipped(mid, slippage decimal.Decimal, side contract.Side, szDecimals int) (decimal.Decimal, string) {
	one := decimal.NewFromInt(1)
	if side == contract.Buy {
		return wirePrice(mid.Mul(one.Add(slippage)), szDecimals, roundDown)
	}
	return wirePrice(mid.Mul(one.Sub(slippage)), szDecimals, roundUp)
}

// limitWire builds one limit order; prices round buy down, sell up.
func (a *Adapter) limitWire(ctx context.Context, c connector.Credential, o connector.OrderRequest) (OrderWire, decimal.Decimal, decimal.Decimal, error) {
	info, err := a.asset(ctx, c, o.Market.Native)
	if err != nil {
		return OrderWire{}, decimal.Zero, decimal.Zero, err
	}
	dir := roundDown
	if o.Side == contract.Sell {
		dir = roundUp
	}
	px, pxs := wirePrice(o.Price, info.szDecimals, dir)
	sz, szs := wireSize(o.Size, info.szDecimals)
	if !px.IsPositive() || !sz.IsPositive() {
		return OrderWire{}, px, sz, contract.Errorf(contract.CodeInvalidRequest, "price or size rounds to zero on %s", o.Market.Canonical)
	}
	// The runtime checked the minimum value on the finest tick; the 5
	// significant figures can take a buy just below it (DESIGN §7: refuse
	// here, naming the rule, rather than let the venue reject it).
	if least := o.Market.MinNotional; least.IsPositive() && px.Mul(sz).LessThan(least) {
		return OrderWire{}, px, sz, contract.Errorf(contract.CodeInvalidRequest,
			"order value %s (size x price, price at hyperliquid's 5 significant figures: %s) is below the minimum notional %s of %s",
			px.Mul(sz), pxs, least, o.Market.Canonical)
	}
	tif := "Gtc"
	if o.PostOnly {
		tif = "Alo" // add liquidity only
	}
	return OrderWire{Asset: info.index, IsBuy: o.Side == contract.Buy, Price: pxs, Size: szs, ReduceOnly: o.ReduceOnly,
		Type: OrderType{Limit: &LimitType{TIF: tif}}, Cloid: Cloid(c.ID, o.ClientOrderID)}, px, sz, nil
}

// placed interprets one order status.
func placed(st Status) (oid string, status string, err error) {
	switch {
	case st.Error != nil:
		return "", contract.StatusRejected, venueError(*st.Error)
	case st.Resting != nil:
		return strconv.FormatUint(uint64(st.Resting.Oid), 10), contract.StatusOpen, nil
	case st.Filled != nil:
		return strconv.FormatUint(uint64(st.Filled.Oid), 10), contract.StatusFilled, nil
	case st.Word == "waitingForFill" || st.Word == "waitingForTrigger":
		return "", contract.StatusPending, nil
	}
	return "", "", contract.Upstream(contract.ReasonUnknown, "", "", "hyperliquid answered with an unknown order status")
}

func (a *Adapter) placeOrders(ctx context.Context, c connector.Credential, acct *account, grouping string, wires []OrderWire) ([]Status, error) {
	ok, err := a.send(ctx, c, acct, OrderAction{Type: ActionOrder, Orders: wires, Grouping: grouping}, len(wires))
	if err != nil {
		return nil, err
	}
	sts, err := statuses(ok, len(wires))
	for _, st := range sts {
		if st.Error != nil && isAddressLimit(*st.Error) {
			a.limits.throttled(c.Environment, acct.user, limitOrders)
		}
	}
	return sts, err
}

// PlaceLimitOrder implements connector.Adapter.
func (a *Adapter) PlaceLimitOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.LimitOrderResult, error) {
	acct, err := a.account(c)
	if err != nil {
		return contract.LimitOrderResult{}, err
	}
	w, px, sz, err := a.limitWire(ctx, c, o)
	if err != nil {
		return contract.LimitOrderResult{}, err
	}
	sts, err := a.placeOrders(ctx, c, acct, "na", []OrderWire{w})
	if err != nil {
		return contract.LimitOrderResult{}, err
	}
	oid, status, err := placed(sts[0])
	if err != nil {
		return contract.LimitOrderResult{}, err
	}
	return contract.LimitOrderResult{OrderID: oid, Market: o.Market.Canonical, Side: o.Side, Size: sz, Price: px, Status: status}, nil
}

// PlaceMarketOrder implements connector.Adapter. Hyperliquid has no market
// order: it is an IOC limit at mid ± the configured slippage (fact sheet §7).
func (a *Adapter) PlaceMarketOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.MarketOrderResult, error) {
	acct, err := a.account(c)
	if err != nil {
		return contract.MarketOrderResult{}, err
	}
	fill, err := a.ioc(ctx, c, acct, o.Market, o.Side, o.Size, o.ReduceOnly, Cloid(c.ID, o.ClientOrderID))
	if err != nil {
		return contract.MarketOrderResult{}, err
	}
	return contract.MarketOrderResult{OrderID: strconv.FormatUint(uint64(fill.Oid), 10), Market: o.Market.Canonical, Side: o.Side,
		FilledPrice: dec(fill.AvgPx), FilledSize: dec(fill.TotalSz), Fee: a.orderFee(ctx, c, acct, uint64(fill.Oid))}, nil
}

// ioc places an immediate-or-cancel order bounded by the slippage from mid.
func (a *Adapter) ioc(ctx context.Context, c connector.Credential, acct *account, m connector.Market, side contract.Side, size decimal.Decimal, reduceOnly bool, cloid string) (*FilledStatus, error) {
	info, err := a.asset(ctx, c, m.Native)
	if err != nil {
		return nil, err
	}
	mid, err := a.mid(ctx, c, m.Native)
	if err != nil {
		return nil, err
	}
	_, pxs := slipped(mid, a.cfg.Slippage, side, info.szDecimals)
	sz, szs := wireSize(size, info.szDecimals)
	if !sz.IsPositive() {
		return nil, contract.Errorf(contract.CodeInvalidRequest, "size rounds to zero on %s", m.Canonical)
	}
	w := OrderWire{Asset: info.index, IsBuy: side == contract.Buy, Price: pxs, Size: szs, ReduceOnly: reduceOnly,
		Type: OrderType{Limit: &LimitType{TIF: "Ioc"}}, Cloid: cloid}
	sts, err := a.placeOrders(ctx, c, acct, "na", []OrderWire{w})
	if err != nil {
		return nil, err
	}
	if _, _, err := placed(sts[0]); err != nil {
		return nil, err
	}
	if sts[0].Filled == nil {
		return nil, contract.Upstream(contract.ReasonInvalidOrder, "", "", "hyperliquid left the IOC order unfilled")
	}
	return sts[0].Filled, nil
}

// orderFee sums the fees of an order's fills. The placement answer has no
// fee, so this reads the fills of the last minute (a light query); when
// that fails the fee reads 0 rather than failing a placed order.
func (a *Adapter) orderFee(ctx context.Context, c connector.Credential, acct *account, oid uint64) decimal.Decimal {
	var fs []UserFill
	start := a.now().Add(-time.Minute).UnixMilli()
	if err := a.info(ctx, c, map[string]any{"type": "userFillsByTime", "user": acct.user, "startTime": start}, &fs); err != nil {
		return decimal.Zero
	}
	fee := decimal.Zero
	for _, f := range fs {
		if uint64(f.Oid) == oid {
			fee = fee.Add(dec(f.Fee))
		}
	}
	return fee
}

// triggerWire builds a market trigger order on mark; the limit price is
// the worst acceptable fill, stopSlippage beyond the trigger.
func triggerWire(info assetInfo, side contract.Side, size, trigger decimal.Decimal, tpsl string, reduceOnly bool, cloid string) (OrderWire, decimal.Decimal) {
	tp, tps := wirePrice(trigger, info.szDecimals, roundNearest)
	one := decimal.NewFromInt(1)
	var pxs string
	if side == contract.Buy {
		_, pxs = wirePrice(tp.Mul(one.Add(stopSlippage)), info.szDecimals, roundDown)
	} else {
		_, pxs = wirePrice(tp.Mul(one.Sub(stopSlippage)), info.szDecimals, roundUp)
	}
	_, szs := wireSize(size, info.szDecimals)
	return OrderWire{Asset: info.index, IsBuy: side == contract.Buy, Price: pxs, Size: szs, ReduceOnly: reduceOnly,
		Type: OrderType{Trigger: &TriggerType{IsMarket: true, TriggerPx: tps, Tpsl: tpsl}}, Cloid: cloid}, tp
}

// PlaceStopOrder implements connector.Adapter: a market trigger order on
// mark. It fires when mark reaches the trigger from the mark at placement
// (DESIGN §13): a buy above it or a sell below is a stop-loss ("sl"), the
// other way a take-profit ("tp"), the venue's two trigger directions.
func (a *Adapter) PlaceStopOrder(ctx context.Context, c connector.Credential, o connector.OrderRequest) (contract.StopOrderResult, error) {
	acct, err := a.account(c)
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	info, err := a.asset(ctx, c, o.Market.Native)
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	tpsl := "tp"
	if o.StopAgainstSide() {
		tpsl = "sl"
	}
	w, trig := triggerWire(info, o.Side, o.Size, o.TriggerPrice, tpsl, o.ReduceOnly, Cloid(c.ID, o.ClientOrderID))
	sts, err := a.placeOrders(ctx, c, acct, "na", []OrderWire{w})
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	oid, status, err := placed(sts[0])
	if err != nil {
		return contract.StopOrderResult{}, err
	}
	if status == contract.StatusOpen { // a resting trigger waits for mark
		status = contract.StatusPending
	}
	return contract.StopOrderResult{OrderID: oid, Status: status, TriggerPrice: trig}, nil
}

// PlaceBatchOrder implements connector.Adapter: one order action; each
// order succeeds or fails on its own (statuses by index).
func (a *Adapter) PlaceBatchOrder(ctx context.Context, c connector.Credential, orders []connector.OrderRequest) ([]contract.BatchOrderResult, error) {
	acct, err := a.account(c)
	if err != nil {
		return nil, err
	}
	out := make([]contract.BatchOrderResult, len(orders))
	var wires []OrderWire
	var sent []int // index in orders of each wire
	for i, o := range orders {
		w, _, _, err := a.limitWire(ctx, c, o)
		if ce, ok := contract.AsError(err); ok && ce.Code == contract.CodeInvalidRequest {
			out[i] = contract.BatchOrderResult{Status: contract.StatusRejected, ClientOrderID: o.ClientOrderID, Error: ce}
			continue // this order alone is refused; the rest go
		}
		if err != nil {
			return nil, err
		}
		wires, sent = append(wires, w), append(sent, i)
	}
	if len(wires) == 0 {
		return out, nil
	}
	sts, err := a.placeOrders(ctx, c, acct, "na", wires)
	if err != nil {
		return nil, err
	}
	for j, st := range sts {
		i := sent[j]
		oid, status, err := placed(st)
		out[i] = contract.BatchOrderResult{OrderID: oid, Status: status, ClientOrderID: orders[i].ClientOrderID}
		if err != nil {
			out[i].Error, _ = contract.AsError(err)
			out[i].Status = contract.StatusRejected
		}
	}
	return out, nil
}

// LinksProtection implements connector.ProtectionLinker: position TP/SL
// (grouping positionTpsl) belong to the position on Hyperliquid, which
// cancels the sibling when one fires and both when the position closes.
func (a *Adapter) LinksProtection() bool { return true }

// PlaceProtectionOrders implements connector.Adapter: the TP and SL legs
// go in one action grouped positionTpsl, reduce-only, opposite the position.
func (a *Adapter) PlaceProtectionOrders(ctx context.Context, c connector.Credential, p connector.ProtectionRequest) (contract.ProtectionResult, error) {
	acct, err := a.account(c)
	if err != nil {
		return contract.ProtectionResult{}, err
	}
	info, err := a.asset(ctx, c, p.Market.Native)
	if err != nil {
		return contract.ProtectionResult{}, err
	}
	side := contract.Sell
	if p.PositionSide == contract.Short {
		side = contract.Buy
	}
	var wires []OrderWire
	var legs []string
	if p.TakeProfit != nil {
		w, _ := triggerWire(info, side, p.Size, *p.TakeProfit, "tp", true, Cloid(c.ID, p.ClientOrderID+"-tp"))
		wires, legs = append(wires, w), append(legs, "tp")
	}
	if p.StopLoss != nil {
		w, _ := triggerWire(info, side, p.Size, *p.StopLoss, "sl", true, Cloid(c.ID, p.ClientOrderID+"-sl"))
		wires, legs = append(wires, w), append(legs, "sl")
	}
	if len(wires) == 0 {
		return contract.ProtectionResult{}, contract.Errorf(contract.CodeInvalidRequest, "give tpPercent, slPercent or both")
	}
	sts, err := a.placeOrders(ctx, c, acct, "positionTpsl", wires)
	if err != nil {
		return contract.ProtectionResult{}, err
	}
	var res contract.ProtectionResult
	var firstErr error
	var placedLegs []CancelByCloidWire
	for i, st := range sts {
		oid, _, err := placed(st)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		placedLegs = append(placedLegs, CancelByCloidWire{Asset: info.index, Cloid: wires[i].Cloid})
		if oid == "" {
			// Position TP/SL legs are acknowledged with a bare
			// "waitingForTrigger" and no oid; the oid is found by cloid.
			if oid, err = a.oidByCloid(ctx, c, acct, wires[i].Cloid); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		if legs[i] == "tp" {
			res.TPOrderID = oid
		} else {
			res.SLOrderID = oid
		}
	}
	if firstErr != nil {
		if len(placedLegs) > 0 { // do not leave half a bracket behind; cloids need no oid
			_, _ = a.send(context.WithoutCancel(ctx), c, acct, CancelByCloidAction{Type: ActionCancelByCloid, Cancels: placedLegs}, len(placedLegs))
		}
		return contract.ProtectionResult{}, firstErr
	}
	return res, nil
}

// oidByCloid finds the oid of an order the venue acknowledged without one.
func (a *Adapter) oidByCloid(ctx context.Context, c connector.Credential, acct *account, cloid string) (string, error) {
	var st OrderStatusResponse
	if err := a.info(ctx, c, map[string]any{"type": "orderStatus", "user": acct.user, "oid": cloid}, &st); err != nil {
		return "", err
	}
	if st.Status != "order" || st.Order == nil {
		return "", contract.Upstream(contract.ReasonUnknown, "", st.Status,
			"hyperliquid acknowledged protection leg %s but does not list it", cloid)
	}
	return strconv.FormatUint(uint64(st.Order.Order.Oid), 10), nil
}

// CancelOrder implements connector.Adapter. orderId is the venue's oid, a
// cloid (0x + 32 hex), or the clientOrderId the order was placed with. The
// market is optional: without it the order's coin is looked up.
func (a *Adapter) CancelOrder(ctx context.Context, c connector.Credential, orderID string, m *connector.Market) error {
	acct, err := a.account(c)
	if err != nil {
		return err
	}
	oid, numErr := strconv.ParseUint(orderID, 10, 64)
	cloid := ""
	if numErr != nil {
		cloid = Cloid(c.ID, orderID)
	}
	coin := ""
	if m != nil {
		coin = m.Native
	} else {
		var ref any = oid
		if cloid != "" {
			ref = cloid
		}
		var st OrderStatusResponse
		if err := a.info(ctx, c, map[string]any{"type": "orderStatus", "user": acct.user, "oid": ref}, &st); err != nil {
			return err
		}
		if st.Status != "order" || st.Order == nil {
			return contract.Upstream(contract.ReasonOrderNotFound, "", "unknownOid", "hyperliquid knows no order %s", orderID)
		}
		coin = st.Order.Order.Coin
	}
	info, err := a.asset(ctx, c, coin)
	if err != nil {
		return err
	}
	var action any = CancelAction{Type: ActionCancel, Cancels: []CancelWire{{Asset: info.index, Oid: oid}}}
	if cloid != "" {
		action = CancelByCloidAction{Type: ActionCancelByCloid, Cancels: []CancelByCloidWire{{Asset: info.index, Cloid: cloid}}}
	}
	ok, err := a.send(ctx, c, acct, action, 1)
	if err != nil {
		return err
	}
	sts, err := statuses(ok, 1)
	if err != nil {
		return err
	}
	if sts[0].Error != nil {
		return venueError(*sts[0].Error)
	}
	return nil
}

// CancelAllOrders implements connector.Adapter. There is no per-market
// cancel-all: list the open orders, cancel the market's in one action and
// count the successes.
func (a *Adapter) CancelAllOrders(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	acct, err := a.account(c)
	if err != nil {
		return 0, err
	}
	info, err := a.asset(ctx, c, m.Native)
	if err != nil {
		return 0, err
	}
	os, err := a.openOrders(ctx, c)
	if err != nil {
		return 0, err
	}
	var cancels []CancelWire
	for _, o := range os {
		if o.Coin == m.Native {
			cancels = append(cancels, CancelWire{Asset: info.index, Oid: uint64(o.Oid)})
		}
	}
	if len(cancels) == 0 {
		return 0, nil
	}
	ok, err := a.send(ctx, c, acct, CancelAction{Type: ActionCancel, Cancels: cancels}, len(cancels))
	if err != nil {
		return 0, err
	}
	sts, err := statuses(ok, len(cancels))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, st := range sts {
		if st.Word == "success" {
			n++
		}
	}
	return n, nil
}

// CloseAllPositions implements connector.Adapter: a reduce-only IOC for
// the whole position, bounded by the slippage from mid.
func (a *Adapter) CloseAllPositions(ctx context.Context, c connector.Credential, m connector.Market) (contract.CloseAllResult, error) {
	acct, err := a.account(c)
	if err != nil {
		return contract.CloseAllResult{}, err
	}
	s, err := a.clearinghouse(ctx, c)
	if err != nil {
		return contract.CloseAllResult{}, err
	}
	var szi decimal.Decimal
	for _, p := range s.AssetPositions {
		if p.Position.Coin == m.Native {
			szi = dec(p.Position.Szi)
		}
	}
	if szi.IsZero() {
		return contract.CloseAllResult{ClosedSize: decimal.Zero, AvgClosePrice: decimal.Zero}, nil
	}
	side := contract.Sell
	if szi.IsNegative() {
		side = contract.Buy
	}
	fill, err := a.ioc(ctx, c, acct, m, side, szi.Abs(), true, "")
	if err != nil {
		return contract.CloseAllResult{}, err
	}
	return contract.CloseAllResult{ClosedSize: dec(fill.TotalSz), AvgClosePrice: dec(fill.AvgPx)}, nil
}

// SetLeverage implements connector.Adapter (cross margin).
func (a *Adapter) SetLeverage(ctx context.Context, c connector.Credential, m connector.Market, leverage int) (int, error) {
	acct, err := a.account(c)
	if err != nil {
		return 0, err
	}
	info, err := a.asset(ctx, c, m.Native)
	if err != nil {
		return 0, err
	}
	if info.maxLeverage > 0 && leverage > info.maxLeverage {
		return 0, contract.Errorf(contract.CodeInvalidRequest, "leverage %d is above the maximum %d of %s", leverage, info.maxLeverage, m.Canonical)
	}
	if _, err := a.send(ctx, c, acct, UpdateLeverageAction{Type: ActionUpdateLeverage, Asset: info.index, IsCross: true, Leverage: leverage}, 1); err != nil {
		return 0, err
	}
	return leverage, nil
}

// FindOrder implements connector.Adapter: orderStatus by the order's cloid
// (derived from the clientOrderId as at placement) answers any state; a
// filled order's price and fee come from its fills.
func (a *Adapter) FindOrder(ctx context.Context, c connector.Credential, _ connector.Market, clientOrderID string) (connector.FoundOrder, bool, error) {
	return a.findOrder(ctx, c, Cloid(c.ID, clientOrderID), clientOrderID)
}

// FindOrderByID implements connector.OrderByIDFinder: orderStatus by oid.
func (a *Adapter) FindOrderByID(ctx context.Context, c connector.Credential, _ connector.Market, orderID string) (connector.FoundOrder, bool, error) {
	oid, err := strconv.ParseUint(orderID, 10, 64)
	if err != nil {
		return connector.FoundOrder{}, false, nil // not an order id of Hyperliquid's
	}
	return a.findOrder(ctx, c, oid, "")
}

// findOrder reads one order by ref (an oid or a cloid) with orderStatus.
func (a *Adapter) findOrder(ctx context.Context, c connector.Credential, ref any, clientOrderID string) (connector.FoundOrder, bool, error) {
	var st OrderStatusResponse
	if err := a.userInfo(ctx, c, &st, "orderStatus", "oid", ref); err != nil {
		return connector.FoundOrder{}, false, err
	}
	if st.Status != "order" || st.Order == nil {
		return connector.FoundOrder{}, false, nil
	}
	o := orderFromWire(st.Order.Order)
	o.ClientOrderID = clientOrderID
	o.Status = statusFromOrderStatus(st.Order.Status, o.Status, o.FilledSize.IsPositive())
	found := connector.FoundOrder{Order: o, AvgPrice: decimal.Zero, Fee: decimal.Zero}
	if o.Status == contract.StatusFilled || o.FilledSize.IsPositive() {
		var fs []UserFill
		if err := a.userInfo(ctx, c, &fs, "userFills"); err != nil {
			return found, true, nil // the state is known; price and fee stay unknown
		}
		size, notional := decimal.Zero, decimal.Zero
		for _, f := range fs {
			if f.Oid == st.Order.Order.Oid {
				size, notional = size.Add(dec(f.Sz)), notional.Add(dec(f.Sz).Mul(dec(f.Px)))
				found.Fee = found.Fee.Add(dec(f.Fee))
			}
		}
		if size.IsPositive() {
			found.AvgPrice = notional.DivRound(size, 8)
			found.FilledSize = size
		}
	}
	return found, true, nil
}

// statusFromOrderStatus maps orderStatus's status: open, triggered, filled,
// canceled and its *Canceled reasons, rejected and its *Rejected reasons
// (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/info-endpoint#query-order-status-by-oid-or-cloid).
// A status not on that list ended the order for a reason nobody told us:
// with nothing filled it is REJECTED, with a part filled CANCELLED.
func statusFromOrderStatus(s, open string, filled bool) string {
	switch {
	case s == "open":
		return open // OPEN, or PENDING for a trigger order
	case s == "triggered":
		return contract.StatusOpen
	case s == "filled":
		return contract.StatusFilled
	case strings.HasSuffix(strings.ToLower(s), "rejected"):
		return contract.StatusRejected
	case strings.HasSuffix(strings.ToLower(s), "canceled"), s == "scheduledCancel":
		return contract.StatusCancelled
	case filled:
		return contract.StatusCancelled
	}
	return contract.StatusRejected
}
