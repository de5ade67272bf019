package sim

import (
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/simkit/fapisim"
)

// table lists the endpoints with their security and IP weight (fact sheet §4, §11).
func (s *Server) table() map[string]fapisim.Route {
	pub, sig, bySymbol := fapisim.Pub, fapisim.Sig, fapisim.BySymbol
	return map[string]fapisim.Route{
		"GET /fapi/v1/ping":              pub(w(1), func(*req) (any, *apiErr) { return map[string]any{}, nil }),
		"GET /fapi/v1/time":              pub(w(1), func(q *req) (any, *apiErr) { return map[string]int64{"serverTime": q.Now.UnixMilli()}, nil }),
		"GET /fapi/v1/exchangeInfo":      pub(w(1), s.ExchangeInfo),
		"GET /fapi/v1/depth":             pub(fapisim.DepthWeight, s.Depth),
		"GET /fapi/v1/premiumIndex":      pub(bySymbol(1, 10), s.PremiumIndex),
		"GET /fapi/v1/klines":            pub(w(2), s.Klines),
		"GET /fapi/v1/openInterest":      pub(w(1), s.openInterest),
		"GET /fapi/v1/fundingInfo":       pub(w(0), s.fundingInfo),
		"GET /fapi/v1/commissionRate":    sig(w(20), s.CommissionRate),
		"GET /fapi/v3/account":           sig(w(5), s.Account),
		"GET /fapi/v3/positionRisk":      sig(w(5), s.positionRisk),
		"GET /fapi/v1/symbolConfig":      sig(w(5), s.symbolConfig),
		"GET /fapi/v1/accountConfig":     sig(w(5), s.accountConfig),
		"GET /fapi/v1/positionSide/dual": sig(w(30), s.PositionSideDual),
		"GET /fapi/v1/rateLimit/order": sig(w(1), func(*req) (any, *apiErr) {
			return []map[string]any{
				{"rateLimitType": "ORDERS", "interval": "SECOND", "intervalNum": 10, "limit": 300},
				{"rateLimitType": "ORDERS", "interval": "MINUTE", "intervalNum": 1, "limit": 1200},
			}, nil
		}),
		"GET /fapi/v1/userTrades":          sig(w(5), s.UserTrades),
		"GET /fapi/v1/income":              sig(w(30), s.Income),
		"GET /fapi/v1/openOrders":          sig(bySymbol(1, 40), s.OpenOrders),
		"GET /fapi/v1/order":               sig(w(1), s.QueryOrder),
		"POST /fapi/v1/order":              sig(w(0), s.NewOrder),
		"DELETE /fapi/v1/order":            sig(w(1), s.CancelOrder),
		"PUT /fapi/v1/order":               sig(w(1), s.ModifyOrder),
		"POST /fapi/v1/countdownCancelAll": sig(w(10), s.CountdownCancelAll),
		"POST /fapi/v1/batchOrders":        sig(w(5), s.BatchOrders),
		"DELETE /fapi/v1/allOpenOrders":    sig(w(1), s.CancelAll),
		"POST /fapi/v1/algoOrder":          sig(w(0), s.newAlgo),
		"DELETE /fapi/v1/algoOrder":        sig(w(1), s.cancelAlgo),
		"GET /fapi/v1/algoOrder":           sig(w(1), s.queryAlgo),
		"DELETE /fapi/v1/algoOpenOrders":   sig(w(1), s.cancelAllAlgos),
		"GET /fapi/v1/openAlgoOrders":      sig(bySymbol(1, 40), s.openAlgos),
		"POST /fapi/v1/leverage":           sig(w(1), s.Leverage),
		"POST /fapi/v1/marginType":         sig(w(1), s.MarginType),
	}
}

func (s *Server) openInterest(q *req) (any, *apiErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	return map[string]any{"openInterest": m.OpenInterest.String(), "symbol": m.Symbol, "time": q.Now.UnixMilli()}, nil
}

func (s *Server) positionRisk(q *req) (any, *apiErr) {
	m, e := s.Market(q, false)
	if e != nil {
		return nil, e
	}
	ps, err := s.eng.Positions(q.Key, m.Symbol)
	if err != nil {
		return nil, errf(500, -1000, "%v", err)
	}
	out := []map[string]any{}
	for _, p := range ps {
		amt := p.Size
		if p.Side == paper.Short {
			amt = amt.Neg()
		}
		out = append(out, map[string]any{
			"symbol": p.Market, "positionSide": "BOTH", "positionAmt": amt.String(), "entryPrice": p.EntryPrice.String(),
			"breakEvenPrice": p.EntryPrice.String(), "markPrice": p.MarkPrice.String(), "unRealizedProfit": p.UnrealizedPnL.String(),
			"liquidationPrice": "0", "isolatedMargin": "0", "notional": p.Notional.String(), "marginAsset": "USDT",
			"isolatedWallet": "0", "initialMargin": p.Margin.String(), "maintMargin": "0", "positionInitialMargin": p.Margin.String(),
			"openOrderInitialMargin": "0", "adl": 0, "bidNotional": "0", "askNotional": "0", "updateTime": q.Now.UnixMilli(),
		})
	}
	return out, nil
}

func (s *Server) symbolConfig(q *req) (any, *apiErr) {
	m, e := s.Market(q, false)
	if e != nil {
		return nil, e
	}
	out := []map[string]any{}
	for _, info := range s.eng.Markets() {
		if m.Symbol != "" && info.Symbol != m.Symbol {
			continue
		}
		lev, _ := s.eng.Leverage(q.Key, info.Symbol)
		out = append(out, map[string]any{"symbol": info.Symbol, "marginType": s.MarginOf(q.Key, info.Symbol),
			"isAutoAddMargin": false, "leverage": lev, "maxNotionalValue": "1000000"})
	}
	return out, nil
}

func (s *Server) accountConfig(q *req) (any, *apiErr) {
	hedge := s.Hedge(q.Key)
	return map[string]any{"feeTier": 0, "canTrade": true, "canDeposit": true, "canWithdraw": true,
		"dualSidePosition": hedge, "updateTime": 0, "multiAssetsMargin": false, "tradeGroupId": -1}, nil
}

// algoClientID checks a clientAlgoId (or makes one): the client order id
// rule, unique among the account's waiting algo orders.
func (s *Server) algoClientID(key, id string) (string, *apiErr) {
	id, e := s.ClientID("", id) // the rule only: the empty account has no orders
	if e != nil {
		return "", e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.algos {
		if a.Key == key && a.ClientID == id && a.Status == "NEW" {
			return "", errf(400, -4116, "ClientOrderId is duplicated.")
		}
	}
	return id, nil
}

// fundingInfo lists the symbols with an adjusted funding interval, as
// Binance's Get Funding Rate Info does (market-data/rest-api/Get-Funding-Rate-Info):
// only those, each with its cap, floor and fundingIntervalHours.
func (s *Server) fundingInfo(*req) (any, *apiErr) {
	out := []map[string]any{}
	for _, m := range s.eng.Markets() {
		if h, ok := s.cfg.FundingHours[m.Symbol]; ok {
			out = append(out, map[string]any{"symbol": m.Symbol, "adjustedFundingRateCap": "0.02500000",
				"adjustedFundingRateFloor": "-0.02500000", "fundingIntervalHours": h, "disclaimer": false})
		}
	}
	return out, nil
}
