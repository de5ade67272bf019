package fapi

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// CloseAllPositions implements connector.Adapter: a reduce-only market
// order against the position, split by MARKET_LOT_SIZE maxQty. Each piece's
// fills come from its trades (FillOf), so the average close price is
// weighted over every trade of every piece. Both venues read positions
// from /fapi/v3/positionRisk.
func (p *Placer) CloseAllPositions(ctx context.Context, c connector.Credential, m connector.Market) (contract.CloseAllResult, error) {
	res := contract.CloseAllResult{ClosedSize: decimal.Zero, AvgClosePrice: decimal.Zero}
	if err := p.OneWay(ctx, c); err != nil {
		return res, err
	}
	rows, err := p.PositionRisk(ctx, c, &m)
	if err != nil {
		return res, err
	}
	maxQty := p.Meta(c, m.Native).MarketMaxQty
	total := connector.NewExecution()
	for _, r := range rows {
		if r.Symbol != m.Native || r.PositionAmt.IsZero() {
			continue
		}
		side := "SELL"
		if r.PositionAmt.IsNegative() {
			side = "BUY"
		}
		for left := r.PositionAmt.Abs(); left.IsPositive(); {
			qty := left
			if maxQty.IsPositive() && qty.GreaterThan(maxQty) {
				qty = maxQty
			}
			o, err := p.Place(ctx, c, SymbolParam(m).Add("side", side).Add("type", "MARKET").
				Add("quantity", FmtDec(qty)).Add("reduceOnly", "true"))
			if err != nil {
				return closeResult(res, total, m), err
			}
			f, err := p.FillOf(ctx, c, m, o)
			if err != nil {
				return closeResult(res, total, m), err
			}
			total.Size, total.Notional = total.Size.Add(f.Size), total.Notional.Add(f.Notional)
			left = left.Sub(qty)
		}
	}
	return closeResult(res, total, m), nil
}

// PositionRisk reads GET /fapi/v3/positionRisk (both venues' path), of one
// market or (m nil) all of them.
func (p *Placer) PositionRisk(ctx context.Context, c connector.Credential, m *connector.Market) ([]PositionRisk, error) {
	var q connector.Query
	if m != nil {
		q = SymbolParam(*m)
	}
	var rows []PositionRisk
	err := p.Signed(ctx, c, http.MethodGet, "/fapi/v3/positionRisk", q, 5, &rows)
	return rows, err
}

// GetPositions implements connector.Adapter from positionRisk; the
// venue's Leverage, when it has one, gives the open positions' leverage
// by symbol, else positionRisk's own (Aster's) does.
func (p *Placer) GetPositions(ctx context.Context, c connector.Credential, m *connector.Market) (contract.PositionsResult, error) {
	rows, err := p.PositionRisk(ctx, c, m)
	if err != nil {
		return contract.PositionsResult{}, err
	}
	out := []contract.Position{}
	if !slices.ContainsFunc(rows, func(r PositionRisk) bool { return !r.PositionAmt.IsZero() }) {
		return contract.PositionsResult{Positions: out}, nil
	}
	var lev map[string]int
	if p.Leverage != nil {
		if lev, err = p.Leverage(ctx, c, m); err != nil {
			return contract.PositionsResult{}, err
		}
	}
	for _, r := range rows {
		if r.PositionAmt.IsZero() {
			continue
		}
		l := r.Leverage.D()
		if p.Leverage != nil {
			l = decimal.NewFromInt(int64(lev[r.Symbol]))
		}
		out = append(out, Position(r, l))
	}
	return contract.PositionsResult{Positions: out}, nil
}

func closeResult(res contract.CloseAllResult, total connector.Execution, m connector.Market) contract.CloseAllResult {
	res.ClosedSize, res.AvgClosePrice = total.Size, total.Price(m)
	return res
}

// SetLeverage implements connector.Adapter: cross margin on the symbol
// (-4046, "no need to change", means it already is), then the leverage.
func (p *Placer) SetLeverage(ctx context.Context, c connector.Credential, m connector.Market, leverage int) (int, error) {
	err := p.Signed(ctx, c, http.MethodPost, p.Prefix+"/marginType", SymbolParam(m).Add("marginType", "CROSSED"), 1, nil)
	if err != nil && !IsCode(err, -4046) {
		return 0, err
	}
	var res struct {
		Leverage connector.Int `json:"leverage"` // a number; a string in some of Aster's answers
	}
	if err := p.Signed(ctx, c, http.MethodPost, p.Prefix+"/leverage", SymbolParam(m).Add("leverage", strconv.Itoa(leverage)), 1, &res); err != nil {
		return 0, err
	}
	return int(res.Leverage), nil
}
