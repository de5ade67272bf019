package aster

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/aster/sign"
)

// Adapter implements connector.Adapter on Aster's V3 futures API. It holds
// no venue state, only per-host caches: clock offsets, weight budgets,
// symbol rules, position modes and funding intervals.
type Adapter struct {
	*fapi.MarketData // depth, mark price, funding rate, candles
	*fapi.Placer     // limit and market orders
	*fapi.Reads      // fees, balance, fills

	cfg Config
	c   *client

	lists venuekit.Catalog[symbolMeta] // by REST base: markets and their market-order rules
	modes fapi.Modes                   // hedge mode, by REST base + user + signer
}

var (
	_ connector.Adapter        = (*Adapter)(nil)
	_ connector.LeverageReader = (*Adapter)(nil)
)

// NewAdapter returns an adapter for cfg; hc nil means connector.NewHTTPClient.
func NewAdapter(cfg Config, hc *http.Client) *Adapter {
	if hc == nil {
		hc = connector.NewHTTPClient(cfg.Timeout)
	}
	a := &Adapter{cfg: cfg, c: newClient(cfg, hc)}
	a.MarketData = &fapi.MarketData{Venue: "Aster", Prefix: "/fapi/v3", Call: a.public, Base: a.base, Now: a.c.now}
	// Account Information v3 is accountWithJoinMargin (fact sheet §0 #7).
	a.Reads = &fapi.Reads{Signed: a.signed, Fees: "/fapi/v3/commissionRate", Balance: "/fapi/v3/accountWithJoinMargin", Trades: "/fapi/v3/userTrades", Fill: fillFromWire}
	a.modes = fapi.Modes{Venue: "Aster", Now: a.c.now, Key: a.credModeKey, Read: a.readMode}
	// userTrades has no orderId filter (fact sheet §0 #8); the RESULT
	// answer's avgPrice is the fill price, but no answer has the fee (§4).
	a.Placer = &fapi.Placer{Errors: venueErrors, Signed: a.signed, Prefix: "/fapi/v3",
		Weight: 1, AnswerPrice: true, CheckID: checkClientID, OneWay: a.modes.OneWay, ForgetMode: a.modes.Forget, Meta: a.symbolMeta,
		Wait: func(ctx context.Context, d time.Duration) error { return a.c.wait(ctx, d) }}
	return a
}

// Exchange implements connector.Adapter.
func (a *Adapter) Exchange() contract.Exchange { return contract.Aster }

// secret is an Aster credential's secret (DESIGN §13): the main wallet's
// address and the API wallet's private key; the signer is derived.
type secret struct {
	UserAddress      string `json:"userAddress"`
	SignerPrivateKey string `json:"signerPrivateKey"`
}

// credKeys reads a credential's secret; its errors never show the key.
func credKeys(c connector.Credential) (*keys, error) {
	var s secret
	if len(c.Secret) == 0 || c.Secret.Decode(&s) != nil || sign.CheckAddress(s.UserAddress) != nil {
		return nil, connector.BadSecret(contract.Aster)
	}
	key, err := sign.ParsePrivateKey(s.SignerPrivateKey)
	if err != nil {
		return nil, connector.BadSecret(contract.Aster)
	}
	return &keys{user: s.UserAddress, signer: sign.Address(key.PubKey()), key: key, chain: chainID(c.Environment)}, nil
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
	if err := a.public(ctx, c, "/fapi/v3/exchangeInfo", nil, 1, &info); err != nil {
		return nil, err
	}
	list, meta := fapi.Markets(info, quote)
	base := a.base(c)
	a.c.host(base).gate.SetLimit(fapi.WeightLimit(info))
	a.lists.Put(base, list, meta)
	return list, nil
}

func (a *Adapter) symbolMeta(c connector.Credential, native string) symbolMeta {
	m, _ := a.lists.Rules(a.base(c), native)
	return m
}

// GetMarketsWithFunding implements connector.Adapter: every premium index
// in one call. Aster publishes no open interest (fact sheet §0 #6), so
// entries leave it out (DESIGN §13).
func (a *Adapter) GetMarketsWithFunding(ctx context.Context, c connector.Credential) (contract.MarketsResult, error) {
	list, err := a.lists.Get(ctx, a.base(c), func(ctx context.Context) ([]connector.Market, error) { return a.Markets(ctx, c) })
	if err != nil {
		return contract.MarketsResult{}, err
	}
	var all []premiumIndex
	if err := a.public(ctx, c, "/fapi/v3/premiumIndex", nil, 1, &all); err != nil {
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
	return contract.MarketsResult{Markets: out}, nil
}

// GetPositions implements connector.Adapter: positionRisk carries the
// leverage, as a string (fact sheet §4 getPositions).
func (a *Adapter) GetPositions(ctx context.Context, c connector.Credential, m *connector.Market) (contract.PositionsResult, error) {
	rows, err := a.positionRisk(ctx, c, m)
	if err != nil {
		return contract.PositionsResult{}, err
	}
	out := []contract.Position{}
	for _, r := range rows {
		if !r.PositionAmt.IsZero() {
			out = append(out, positionFromWire(r))
		}
	}
	return contract.PositionsResult{Positions: out}, nil
}

func (a *Adapter) positionRisk(ctx context.Context, c connector.Credential, m *connector.Market) ([]positionRisk, error) {
	var p params
	if m != nil {
		p = symbolParam(*m)
	}
	var rows []positionRisk
	err := a.signed(ctx, c, http.MethodGet, "/fapi/v3/positionRisk", p, 5, &rows)
	return rows, err
}

// GetLeverage implements connector.LeverageReader from positionRisk's
// row for the symbol; 0 (unknown) when Aster lists none.
func (a *Adapter) GetLeverage(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	rows, err := a.positionRisk(ctx, c, &m)
	if err != nil {
		return 0, err
	}
	for _, r := range rows {
		if r.Symbol == m.Native && r.Leverage.Given {
			return int(r.Leverage.D().IntPart()), nil
		}
	}
	return 0, nil
}

// GetOrders implements connector.Adapter: openOrders lists regular and
// conditional orders alike (fact sheet §0 #5).
func (a *Adapter) GetOrders(ctx context.Context, c connector.Credential, m *connector.Market) (contract.OrdersResult, error) {
	open, err := a.openOrders(ctx, c, m)
	if err != nil {
		return contract.OrdersResult{}, err
	}
	out := make([]contract.Order, 0, len(open))
	for _, o := range open {
		out = append(out, orderFromWire(o))
	}
	return contract.OrdersResult{Orders: out}, nil
}

func (a *Adapter) openOrders(ctx context.Context, c connector.Credential, m *connector.Market) ([]order, error) {
	var p params
	weight := 40
	if m != nil {
		p, weight = symbolParam(*m), 1
	}
	var open []order
	err := a.signed(ctx, c, http.MethodGet, "/fapi/v3/openOrders", p, weight, &open)
	return open, err
}

// TestCredentials implements connector.Adapter with GET
// /fapi/v3/positionSide/dual, a signed read: every signed call checks
// user, signer, key and nonce together (fact sheet §4 testCredentials), so
// a refused one is valid:false with Aster's reason. It also learns the
// position mode.
func (a *Adapter) TestCredentials(ctx context.Context, c connector.Credential) (bool, error) {
	k, err := credKeys(c)
	if err != nil {
		return false, err
	}
	if _, err := a.positionMode(ctx, c, k); err != nil {
		return false, connector.RejectedBy(err)
	}
	return true, nil
}

func modeKey(base string, k *keys) string {
	return base + " " + strings.ToLower(k.user) + " " + k.signer
}

// credModeKey is the key a credential's position mode is cached under.
func (a *Adapter) credModeKey(c connector.Credential) (string, error) {
	k, err := credKeys(c)
	if err != nil {
		return "", err
	}
	return modeKey(a.base(c), k), nil
}

func (a *Adapter) readMode(ctx context.Context, c connector.Credential) (bool, error) {
	k, err := credKeys(c)
	if err != nil {
		return false, err
	}
	return a.positionMode(ctx, c, k)
}

// positionMode reads dualSidePosition (weight 30) and caches it.
func (a *Adapter) positionMode(ctx context.Context, c connector.Credential, k *keys) (bool, error) {
	var res struct {
		DualSidePosition bool `json:"dualSidePosition"`
	}
	base := a.base(c)
	if err := a.c.do(ctx, base, k, request{method: http.MethodGet, path: "/fapi/v3/positionSide/dual", signed: true, weight: 30}, &res); err != nil {
		return false, err
	}
	a.modes.Put(modeKey(base, k), res.DualSidePosition)
	return res.DualSidePosition, nil
}
