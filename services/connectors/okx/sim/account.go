package sim

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// https://www.okx.com/docs-v5/en/#trading-account-rest-api-get-fee-rates
// Rates are negative when charged; the top-level maker/taker fields are
// deprecated and empty for swaps.
func (s *Server) tradeFee(q *req) (any, *apiErr) {
	if q.get("instType") == "" {
		return nil, badParam("instType")
	}
	f := s.eng.Fees()
	bp := decimal.NewFromInt(-10000)
	return []map[string]any{{"level": "Lv1", "instType": q.get("instType"), "maker": "", "taker": "", "makerU": "", "takerU": "",
		"feeGroup": []map[string]string{{"groupId": "1", "maker": "-0.0002", "taker": "-0.0005"},
			{"groupId": "2", "maker": f.MakerBps.Div(bp).String(), "taker": f.TakerBps.Div(bp).String()}},
		"ts": ms(q.now)}}, nil
}

// https://www.okx.com/docs-v5/en/#trading-account-rest-api-get-balance
func (s *Server) balance(q *req) (any, *apiErr) {
	b, err := s.eng.Balance(q.key)
	if err != nil {
		return nil, errf("50026", "%v", err)
	}
	usdt := map[string]string{"ccy": "USDT", "eq": b.Equity.String(), "cashBal": b.Wallet.String(), "availBal": b.FreeCollateral.String(),
		"availEq": b.FreeCollateral.String(), "upl": b.UnrealizedPnL.String(), "frozenBal": b.PositionMargin.Add(b.OrderMargin).String(),
		"eqUsd": b.Equity.String(), "uTime": ms(q.now)}
	if s.mode(q.key).acctLv == "1" {
		usdt["availEq"] = ""
	}
	// adjEq and the account-level availEq are given in multi-currency and
	// portfolio margin only (get-balance page).
	adjEq, availEq := "", ""
	if lv := s.mode(q.key).acctLv; lv == "3" || lv == "4" {
		adjEq, availEq = b.Equity.String(), b.FreeCollateral.String()
	}
	return []map[string]any{{"totalEq": b.Equity.String(), "adjEq": adjEq, "availEq": availEq, "imr": b.PositionMargin.String(), "mmr": "0",
		"upl": b.UnrealizedPnL.String(), "uTime": ms(q.now), "details": []any{usdt}}}, nil
}

// https://www.okx.com/docs-v5/en/#trading-account-rest-api-get-positions
func (s *Server) positions(q *req) (any, *apiErr) {
	if v := q.get("instType"); v != "" && v != "SWAP" {
		return []any{}, nil
	}
	want := q.get("instId")
	if want != "" {
		if _, e := s.inst(want); e != nil {
			return nil, e
		}
	}
	ps, err := s.eng.Positions(q.key, want)
	if err != nil {
		return nil, errf("50026", "%v", err)
	}
	out := []map[string]string{}
	for _, p := range ps {
		in := s.insts[p.Market]
		pos := contracts(p.Size, in)
		if p.Side == paper.Short {
			pos = pos.Neg()
		}
		out = append(out, map[string]string{"instType": "SWAP", "instId": p.Market, "mgnMode": "cross", "posSide": "net",
			"pos": pos.String(), "posCcy": "", "avgPx": p.EntryPrice.String(), "markPx": p.MarkPrice.String(),
			"upl": p.UnrealizedPnL.String(), "lever": strconv.Itoa(p.Leverage), "notionalUsd": p.Notional.String(),
			"imr": p.Margin.String(), "ccy": "USDT", "cTime": ms(q.now), "uTime": ms(q.now)})
	}
	return out, nil
}

// https://www.okx.com/docs-v5/en/#trading-account-rest-api-get-account-configuration
func (s *Server) accountConfig(q *req) (any, *apiErr) {
	m := s.mode(q.key)
	return []map[string]string{{"uid": "44705892343619584", "mainUid": "44705892343619584", "acctLv": m.acctLv, "posMode": m.posMode,
		"autoLoan": "false", "greeksType": "PA", "level": "Lv1", "levelTmp": "", "ctIsoMode": "automatic", "mgnIsoMode": "automatic",
		"label": "sim", "perm": "read_only,trade", "ip": "", "roleType": "0", "spotRoleType": "0", "traderInsts": ""}}, nil
}

// https://www.okx.com/docs-v5/en/#trading-account-rest-api-set-leverage
func (s *Server) setLeverage(q *req) (any, *apiErr) {
	get, e := decodeObject(q.body)
	if e != nil {
		return nil, e
	}
	in, e := s.inst(get("instId"))
	if e != nil {
		return nil, e
	}
	if mm := get("mgnMode"); mm != "cross" && mm != "isolated" {
		return nil, badParam("mgnMode")
	}
	lev, err := strconv.Atoi(get("lever"))
	if err != nil || lev < 1 {
		return nil, badParam("lever")
	}
	if lev > in.Lever {
		return nil, errf("59102", "Leverage exceeds the maximum leverage of %d", in.Lever)
	}
	got, err := s.eng.SetLeverage(q.key, in.InstID, lev)
	if errors.Is(err, paper.ErrInsufficientMargin) {
		return nil, errf("51008", "Order failed. Insufficient USDT margin in account")
	}
	if err != nil {
		return nil, errf("51000", "%v", err)
	}
	return []map[string]string{{"lever": strconv.Itoa(got), "mgnMode": get("mgnMode"), "instId": in.InstID, "posSide": ""}}, nil
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-transaction-details-last-3-days
// Newest first; after = billId: older fills than that one.
// fills is GET /trade/fills, the last 3 days
// (https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-transaction-details-last-3-days),
// and fillsHistory GET /trade/fills-history, the last 3 months
// (https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-transaction-details-last-3-months).
func (s *Server) fills(q *req) (any, *apiErr) { return s.fillsWithin(q, 3*24*time.Hour) }

func (s *Server) fillsHistory(q *req) (any, *apiErr) {
	if q.get("instType") == "" {
		return nil, badParam("instType")
	}
	return s.fillsWithin(q, 90*24*time.Hour)
}

func (s *Server) fillsWithin(q *req, window time.Duration) (any, *apiErr) {
	want := q.get("instId")
	if want != "" {
		if _, e := s.inst(want); e != nil {
			return nil, e
		}
	}
	limit := 100
	if v := q.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return nil, badParam("limit")
		}
		limit = n
	}
	var after int64
	if v := q.get("after"); v != "" {
		after, _ = strconv.ParseInt(v, 10, 64)
	}
	wantOrd := ""
	if v := q.get("ordId"); v != "" {
		wantOrd, _ = paperID(v, ordOffset)
	}
	fs, err := s.eng.Fills(q.key, want, 100000)
	if err != nil {
		return nil, errf("50026", "%v", err)
	}
	out := []map[string]string{}
	for _, f := range fs {
		id := okxID(f.ID, fillOffset)
		n, _ := strconv.ParseInt(id, 10, 64)
		if (after > 0 && n >= after) || (wantOrd != "" && f.OrderID != wantOrd) || len(out) == limit || q.now.Sub(f.Time) > window {
			continue
		}
		in := s.insts[f.Market]
		exec := "T"
		if f.Liquidity == paper.Maker {
			exec = "M"
		}
		out = append(out, map[string]string{"instType": "SWAP", "instId": f.Market, "tradeId": id, "billId": id,
			"ordId": okxID(f.OrderID, ordOffset), "clOrdId": f.ClientOrderID, "side": strings.ToLower(string(f.Side)),
			"posSide": "net", "fillSz": contracts(f.Size, in).String(), "fillPx": f.Price.String(), "fee": f.Fee.Neg().String(),
			"feeCcy": "USDT", "execType": exec, "fillPnl": f.RealizedPnL.String(), "ts": ms(f.Time), "fillTime": ms(f.Time)})
	}
	return out, nil
}

// https://www.okx.com/docs-v5/en/#trading-account-rest-api-get-leverage
func (s *Server) leverageInfo(q *req) (any, *apiErr) {
	in, e := s.inst(q.get("instId"))
	if e != nil {
		return nil, e
	}
	mm := q.get("mgnMode")
	if mm != "cross" && mm != "isolated" {
		return nil, badParam("mgnMode")
	}
	lev, err := s.eng.Leverage(q.key, in.InstID)
	if err != nil {
		return nil, errf("51000", "%v", err)
	}
	return []map[string]string{{"instId": in.InstID, "mgnMode": mm, "posSide": "net", "lever": strconv.Itoa(lev)}}, nil
}
