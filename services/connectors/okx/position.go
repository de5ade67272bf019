package okx

import (
	"context"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// CloseAllPositions implements connector.Adapter with reduce-only market
// orders against the position, split at maxMktSz, each read back for its
// fills: close-position answers no fills (fact sheet §0 #4).
func (a *Adapter) CloseAllPositions(ctx context.Context, c connector.Credential, m connector.Market) (contract.CloseAllResult, error) {
	res := contract.CloseAllResult{ClosedSize: decimal.Zero, AvgClosePrice: decimal.Zero}
	if err := a.tradable(ctx, c); err != nil {
		return res, err
	}
	im, err := a.inst(ctx, c, m.Native)
	if err != nil {
		return res, err
	}
	rows, err := a.positions(ctx, c, &m)
	if err != nil {
		return res, err
	}
	total := execution{size: decimal.Zero, notional: decimal.Zero, fee: decimal.Zero}
	done := func() contract.CloseAllResult {
		res.ClosedSize, res.AvgClosePrice = im.base(total.size), total.price(m)
		return res
	}
	for _, p := range rows {
		if p.InstID != m.Native || p.Pos.IsZero() {
			continue
		}
		side := contract.Sell
		if p.Pos.IsNegative() {
			side = contract.Buy
		}
		for left := p.Pos.Abs(); left.IsPositive(); {
			sz := left
			if im.maxMktSz.IsPositive() && sz.GreaterThan(im.maxMktSz) {
				sz = im.maxMktSz
			}
			b := orderBody{InstID: m.Native, TdMode: "cross", Side: sideToWire(side), OrdType: "market", Sz: fmtDec(sz), ReduceOnly: true}
			pl, err := a.place(ctx, c, b)
			if err != nil {
				return done(), err
			}
			e, _, err := a.executed(ctx, c, m.Native, pl.OrdID)
			if err != nil {
				return done(), err
			}
			total.size, total.notional = total.size.Add(e.size), total.notional.Add(e.notional)
			left = left.Sub(sz)
		}
	}
	return done(), nil
}

// SetLeverage implements connector.Adapter: cross-margin leverage of the
// instrument. Cross is not a stored setting on OKX; every order says
// tdMode cross.
func (a *Adapter) SetLeverage(ctx context.Context, c connector.Credential, m connector.Market, leverage int) (int, error) {
	var res []leverageAnswer
	if err := a.post(ctx, c, request{path: "/api/v5/account/set-leverage",
		body: leverageBody{InstID: m.Native, Lever: itoa(leverage), MgnMode: "cross"}, limit: rule{n: 20}}, &res); err != nil {
		return 0, err
	}
	if len(res) == 0 {
		return leverage, nil
	}
	return int(res[0].Lever.IntPart()), nil
}

// GetLeverage implements connector.LeverageReader: GET
// /api/v5/account/leverage-info of the instrument in cross margin.
func (a *Adapter) GetLeverage(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	var res []leverageAnswer
	q := params{}.Add("instId", m.Native).Add("mgnMode", "cross")
	if err := a.get(ctx, c, "/api/v5/account/leverage-info", q, rule{n: 20}, &res); err != nil {
		return 0, err
	}
	lev := 0
	for _, r := range res {
		if r.InstID == m.Native {
			lev = max(lev, int(r.Lever.Ceil().IntPart()))
		}
	}
	return lev, nil
}

func itoa(n int) string { return decimal.NewFromInt(int64(n)).String() }
