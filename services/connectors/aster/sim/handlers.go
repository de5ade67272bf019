package sim

import (
	"strconv"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/simkit/fapisim"
)

// table lists the endpoints with their security and IP weight (fact sheet §4, §11).
func (s *Server) table() map[string]fapisim.Route {
	pub, sig, bySymbol := fapisim.Pub, fapisim.Sig, fapisim.BySymbol
	return map[string]fapisim.Route{
		"GET /fapi/v3/ping":                  pub(w(1), func(*req) (any, *apiErr) { return map[string]any{}, nil }),
		"GET /fapi/v3/time":                  pub(w(1), func(q *req) (any, *apiErr) { return map[string]int64{"serverTime": q.Now.UnixMilli()}, nil }),
		"GET /fapi/v3/exchangeInfo":          pub(w(1), s.ExchangeInfo),
		"GET /fapi/v3/depth":                 pub(fapisim.DepthWeight, s.Depth),
		"GET /fapi/v3/premiumIndex":          pub(w(1), s.PremiumIndex),
		"GET /fapi/v3/klines":                pub(w(2), s.Klines),
		"GET /fapi/v3/fundingInfo":           pub(w(1), s.fundingInfo),
		"GET /fapi/v3/commissionRate":        sig(w(20), s.CommissionRate),
		"GET /fapi/v3/accountWithJoinMargin": sig(w(5), s.Account),
		"GET /fapi/v3/balance":               sig(w(5), s.balance),
		"GET /fapi/v3/positionRisk":          sig(w(5), s.positionRisk),
		"GET /fapi/v3/positionSide/dual":     sig(w(30), s.PositionSideDual),
		"GET /fapi/v3/userTrades":            sig(w(5), s.UserTrades),
		"GET /fapi/v3/income":                sig(w(30), s.Income),
		"GET /fapi/v3/openOrders":            sig(bySymbol(1, 40), s.OpenOrders),
		"GET /fapi/v3/order":                 sig(w(1), s.QueryOrder),
		"POST /fapi/v3/order":                sig(w(1), s.NewOrder),
		"DELETE /fapi/v3/order":              sig(w(1), s.CancelOrder),
		"PUT /fapi/v3/order":                 sig(w(1), s.ModifyOrder),
		"POST /fapi/v3/countdownCancelAll":   sig(w(10), s.CountdownCancelAll),
		"POST /fapi/v3/batchOrders":          sig(w(5), s.BatchOrders),
		"DELETE /fapi/v3/allOpenOrders":      sig(w(1), s.CancelAll),
		"POST /fapi/v3/leverage":             sig(w(1), s.Leverage),
		"POST /fapi/v3/marginType":           sig(w(1), s.MarginType),
		"POST /fapi/v3/listenKey":            sig(w(1), s.newListenKey),
		"PUT /fapi/v3/listenKey":             sig(w(1), s.keepListenKey),
		"DELETE /fapi/v3/listenKey":          sig(w(1), s.closeListenKey),
	}
}

// balance is Futures Account Balance v3 (GET /fapi/v3/balance): one row
// per asset, updateTime as a string as recorded (fact sheet §4 getBalance).
func (s *Server) balance(q *req) (any, *apiErr) {
	b, err := s.eng.Balance(q.Key)
	if err != nil {
		return nil, errf(500, -1000, "%v", err)
	}
	return []map[string]any{{"accountAlias": "SgsR", "asset": "USDT", "balance": b.Wallet.String(),
		"crossWalletBalance": b.Wallet.String(), "crossUnPnl": b.UnrealizedPnL.String(),
		"availableBalance": b.FreeCollateral.String(), "maxWithdrawAmount": b.FreeCollateral.String(),
		"marginAvailable": true, "updateTime": strconv.FormatInt(q.Now.UnixMilli(), 10)}}, nil
}

// positionRisk is Position Information v3: one row per symbol (per side
// in hedge mode), positionAmt 0 where the account holds nothing, with the
// symbol's leverage as a string and marginType in lower case (fact sheet
// §4 getPositions).
func (s *Server) positionRisk(q *req) (any, *apiErr) {
	m, e := s.Market(q, false)
	if e != nil {
		return nil, e
	}
	ps, err := s.eng.Positions(q.Key, m.Symbol)
	if err != nil {
		return nil, errf(500, -1000, "%v", err)
	}
	held := map[string]paper.Position{}
	for _, p := range ps {
		held[p.Market] = p
	}
	out := []map[string]any{}
	for _, info := range s.eng.Markets() {
		if m.Symbol != "" && info.Symbol != m.Symbol {
			continue
		}
		p, ok := held[info.Symbol]
		if !ok {
			p = paper.Position{Market: info.Symbol, MarkPrice: info.MarkPrice}
		}
		out = append(out, s.positionRow(q, p))
	}
	return out, nil
}

func (s *Server) positionRow(q *req, p paper.Position) map[string]any {
	amt := p.Size
	if p.Side == paper.Short {
		amt = amt.Neg()
	}
	lev, _ := s.eng.Leverage(q.Key, p.Market)
	mt := "cross"
	if s.MarginOf(q.Key, p.Market) == "ISOLATED" {
		mt = "isolated"
	}
	return map[string]any{
		"leverage": strconv.Itoa(lev), "marginType": mt,
		"symbol": p.Market, "positionSide": "BOTH", "positionAmt": amt.String(), "entryPrice": p.EntryPrice.String(),
		"breakEvenPrice": p.EntryPrice.String(), "markPrice": p.MarkPrice.String(), "unRealizedProfit": p.UnrealizedPnL.String(),
		"liquidationPrice": "0", "isolatedMargin": "0", "notional": p.Notional.String(), "marginAsset": "USDT",
		"isolatedWallet": "0", "initialMargin": p.Margin.String(), "maintMargin": "0", "positionInitialMargin": p.Margin.String(),
		"openOrderInitialMargin": "0", "adl": 0, "bidNotional": "0", "askNotional": "0", "updateTime": q.Now.UnixMilli(),
	}
}

// fundingInfo is GET /fapi/v3/fundingInfo: every symbol with its cap,
// floor and fundingIntervalHours (8 unless configured; fact sheet §4).
func (s *Server) fundingInfo(q *req) (any, *apiErr) {
	out := []map[string]any{}
	for _, m := range s.eng.Markets() {
		h, ok := s.cfg.FundingHours[m.Symbol]
		if !ok {
			h = 8
		}
		out = append(out, map[string]any{"symbol": m.Symbol, "interestRate": "0.00010000", "time": q.Now.UnixMilli(),
			"fundingIntervalHours": h, "fundingFeeCap": nil, "fundingFeeFloor": nil})
	}
	return out, nil
}
