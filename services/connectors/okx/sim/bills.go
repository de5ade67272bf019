package sim

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
)

// bills serves GET /api/v5/account/bills (the last 7 days) and
// /api/v5/account/bills-archive (3 months)
// (https://www.okx.com/docs-v5/en/#trading-account-rest-api-get-bills-details-last-7-days,
// #trading-account-rest-api-get-bills-details-last-3-months) from the
// funding payments the paper engine books: type 8 (funding fee) bills
// only, subType 173 (expense) or 174 (income), balChg signed, newest
// first. after=billId pages to older bills, begin and end bound ts (ms),
// limit 1-100 (default 100).
func (s *Server) bills(reach time.Duration) func(q *req) (any, *apiErr) {
	return func(q *req) (any, *apiErr) {
		limit := 100
		if v := q.get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 100 {
				return nil, badParam("limit")
			}
			limit = n
		}
		if s.cfg.PageCap > 0 {
			limit = min(limit, s.cfg.PageCap)
		}
		var after, begin, end int64
		for _, f := range []struct {
			name string
			dst  *int64
		}{{"after", &after}, {"begin", &begin}, {"end", &end}} {
			if v := q.get(f.name); v != "" {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n < 0 {
					return nil, badParam(f.name)
				}
				*f.dst = n
			}
		}
		if t := q.get("type"); t != "" && t != "8" {
			return []map[string]string{}, nil
		}
		from := q.now.Add(-reach)
		if b := time.UnixMilli(begin); b.After(from) {
			from = b
		}
		all, err := s.eng.FundingPayments(q.key, q.get("instId"), from, 1<<30)
		if err != nil {
			return nil, errf("50026", "%v", err)
		}
		syms := s.eng.MarketSymbols()
		billID := func(p paper.FundingPayment) int64 { return p.Time.Unix()*100 + int64(slices.Index(syms, p.Market)) }
		// OKX answers newest bill first; payments of one instant come in
		// the engine's market order, so order them by bill id for paging.
		slices.SortStableFunc(all, func(x, y paper.FundingPayment) int { return cmp.Compare(billID(y), billID(x)) })
		out := []map[string]string{}
		for _, p := range all {
			id := billID(p)
			if (after > 0 && id >= after) || (end > 0 && p.Time.UnixMilli() > end) || len(out) == limit {
				continue
			}
			sub := "174"
			if p.Amount.IsNegative() {
				sub = "173"
			}
			out = append(out, map[string]string{"billId": strconv.FormatInt(id, 10), "instType": "SWAP", "instId": p.Market,
				"ccy": "USDT", "type": "8", "subType": sub, "balChg": p.Amount.String(), "bal": "", "sz": "", "px": "",
				"fee": "0", "pnl": "0", "mgnMode": "cross", "execType": "", "ordId": "", "tradeId": "", "notes": "",
				"ts": ms(p.Time), "fillTime": ""})
		}
		return out, nil
	}
}
