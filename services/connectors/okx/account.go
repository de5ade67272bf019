package okx

import (
	"context"
	"net/http"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// GetFeeInfo implements connector.Adapter: the account's rates for the
// instrument's fee group (fact sheet §0 #6), in basis points charged.
func (a *Adapter) GetFeeInfo(ctx context.Context, c connector.Credential, m connector.Market) (contract.FeeInfoResult, error) {
	im, err := a.inst(ctx, c, m.Native)
	if err != nil {
		return contract.FeeInfoResult{}, err
	}
	var fees []tradeFee
	if err := a.get(ctx, c, "/api/v5/account/trade-fee", params{}.Add("instType", "SWAP").Add("instFamily", im.family), rule{n: 5}, &fees); err != nil {
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
	cfg, err := a.config(ctx, c)
	if err != nil {
		return contract.BalanceResult{}, err
	}
	var bs []balance
	if err := a.get(ctx, c, "/api/v5/account/balance", nil, rule{n: 10}, &bs); err != nil {
		return contract.BalanceResult{}, err
	}
	res := contract.BalanceResult{Equity: decimal.Zero, FreeCollateral: decimal.Zero, AccountValue: decimal.Zero}
	if len(bs) == 0 {
		return res, nil
	}
	b := bs[0]
	res.Equity, res.AccountValue = b.TotalEq.Decimal, b.TotalEq.Decimal
	if cfg.AcctLv == "3" || cfg.AcctLv == "4" {
		// Multi-currency and portfolio margin pool every currency in USD:
		// the account-level availEq, else adjEq less imr, is what it can use.
		res.FreeCollateral = b.AvailEq.Decimal
		if !b.AvailEq.Given {
			res.FreeCollateral = b.AdjEq.Sub(b.Imr.Decimal)
		}
		return res, nil
	}
	for _, d := range b.Details {
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
	q := params{}.Add("instType", "SWAP")
	if m != nil {
		q = q.Add("instId", m.Native)
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
	regular, err := a.pendingRegular(ctx, c, m)
	if err != nil {
		return nil, nil, err
	}
	var algos []algoOrder
	for _, t := range algoTypes {
		q := params{}.Add("ordType", t).Add("instType", "SWAP")
		if m != nil {
			q = q.Add("instId", m.Native)
		}
		page, err := pending(ctx, a, c, "/api/v5/trade/orders-algo-pending", q, rule{n: 20}, func(o algoOrder) string { return o.AlgoID })
		if err != nil {
			return nil, nil, err
		}
		algos = append(algos, page...)
	}
	return regular, algos, nil
}

// pendingRegular lists the pending regular orders.
func (a *Adapter) pendingRegular(ctx context.Context, c connector.Credential, m *connector.Market) ([]order, error) {
	q := params{}.Add("instType", "SWAP")
	if m != nil {
		q = q.Add("instId", m.Native)
	}
	return pending(ctx, a, c, "/api/v5/trade/orders-pending", q, rule{n: 60}, func(o order) string { return o.OrdID })
}

// pending reads a pending-orders list pageSize a page, each page after
// the last id of the one before.
func pending[T any](ctx context.Context, a *Adapter, c connector.Credential, path string, base params, lim rule, id func(T) string) ([]T, error) {
	return venuekit.AfterPages(pageSize, func(after string) ([]T, error) {
		q := base.Add("limit", strconv.Itoa(pageSize))
		if after != "" {
			q = q.Add("after", after)
		}
		var page []T
		err := a.get(ctx, c, path, q, lim, &page)
		return page, err
	}, id)
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
	after := ""
	// /trade/fills holds the last 3 days; older fills are in
	// /trade/fills-history (3 months), read on from the last billId.
	for _, src := range []struct {
		path string
		rule rule
	}{{"/api/v5/trade/fills", rule{n: 60}}, {"/api/v5/trade/fills-history", rule{n: 10}}} {
		for len(out) < limit {
			q := params{}.Add("instType", "SWAP").Add("instId", m.Native).Add("limit", strconv.Itoa(min(limit-len(out), fillsPerCall)))
			if after != "" {
				q = q.Add("after", after)
			}
			var page []fill
			if err := a.get(ctx, c, src.path, q, src.rule, &page); err != nil {
				return contract.FillsResult{}, err
			}
			for _, f := range page {
				out = append(out, fillFromWire(f, im))
			}
			if len(page) > 0 {
				after = string(page[len(page)-1].BillID)
			}
			if len(page) < fillsPerCall {
				break
			}
		}
	}
	return contract.FillsResult{Fills: out}, nil
}

// TestCredentials implements connector.Adapter with GET
// /api/v5/account/config, a signed read that checks key, secret and
// passphrase; a rejected credential is valid:false. An account that
// cannot trade swaps is still valid: trading says what to change.
func (a *Adapter) TestCredentials(ctx context.Context, c connector.Credential) (bool, error) {
	return venuekit.CheckKeys(ctx, contract.OKX, func() (*keys, error) { return credKeys(c) },
		func(ctx context.Context, k *keys) error { _, err := a.accountConfig(ctx, c, k); return err })
}

func (a *Adapter) accountConfig(ctx context.Context, c connector.Credential, k *keys) (accountConfig, error) {
	var cfgs []accountConfig
	if err := a.c.do(ctx, a.base(c), k, request{method: http.MethodGet, path: "/api/v5/account/config", signed: true, demo: demo(c), limit: rule{n: 5}}, &cfgs); err != nil {
		return accountConfig{}, err
	}
	if len(cfgs) == 0 {
		return accountConfig{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "OKX answered /api/v5/account/config without data")
	}
	a.configs.Put(a.scope(c)+" "+k.apiKey, cfgs[0], a.c.Now())
	return cfgs[0], nil
}

// tradable refuses to trade for an account that cannot trade swaps the
// way the connector does (fact sheet §8): Spot mode (acctLv 1) cannot
// trade swaps at all, and long/short position mode needs posSide on every
// order where the contract speaks of one position per market. The
// configuration is cached per credential for configTTL.
func (a *Adapter) tradable(ctx context.Context, c connector.Credential) error {
	cfg, err := a.config(ctx, c)
	if err != nil {
		return err
	}
	switch {
	case cfg.AcctLv == "1":
		return contract.Upstream(contract.ReasonPermissionDenied, "", "acctLv=1",
			"the OKX account is in Spot mode (acctLv 1), which cannot trade perpetual swaps: switch the account mode to "+
				"Futures mode (or Multi-currency margin) in OKX's trading settings (Settings > Account mode) and retry")
	case cfg.PosMode == "long_short_mode":
		return contract.Upstream(contract.ReasonPermissionDenied, "", "posMode=long_short_mode",
			"the OKX account is in long/short position mode; perpgate trades one position per market: switch the "+
				"position mode to One-way (net_mode) in OKX's trading settings (no open orders or positions) and retry")
	}
	return nil
}

// config is the account's configuration, read at most once per configTTL.
func (a *Adapter) config(ctx context.Context, c connector.Credential) (accountConfig, error) {
	k, err := credKeys(c)
	if err != nil {
		return accountConfig{}, err
	}
	if cfg, ok := a.configs.Get(a.scope(c)+" "+k.apiKey, a.c.Now(), configTTL); ok {
		return cfg, nil
	}
	return a.accountConfig(ctx, c, k)
}

// forgetConfig drops a cached account configuration after OKX said the
// account mode does not allow an order (51010).
func (a *Adapter) forgetConfig(c connector.Credential) {
	if k, err := credKeys(c); err == nil {
		a.configs.Forget(a.scope(c) + " " + k.apiKey)
	}
}
