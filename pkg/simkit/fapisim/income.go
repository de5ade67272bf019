package fapisim

import (
	"slices"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
)

// Income serves Get Income History (USER_DATA, weight 30; Aster's
// fapi/v3/income is the same) for symbol ("" for all), from the funding
// payments the paper engine books: the history holds FUNDING_FEE entries
// only. As documented at
// https://developers.binance.com/docs/derivatives/usds-margined-futures/account/rest-api/Get-Income-History:
// oldest first; limit default 100, max 1000; page (from 1) pages the
// range; without startTime and
// endTime the most recent limit entries of the last 7 days; with a range
// holding more than limit, pages of limit from startTime (page, from 1).
// income is
// positive when the account received it.
func Income(eng *paper.Engine, pageCap int, q *Req, symbol string) (any, *APIErr) {
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return nil, Errf(400, -1130, "Data sent for parameter 'limit' is not valid.")
		}
		limit = n
	}
	if pageCap > 0 {
		limit = min(limit, pageCap)
	}
	page := 1
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, BadParam("page")
		}
		page = n
	}
	start, end, e := msRange(q)
	if e != nil {
		return nil, e
	}
	if t := q.Get("incomeType"); t != "" && t != "FUNDING_FEE" {
		return []map[string]any{}, nil
	}
	recentOnly := start.IsZero() && end.IsZero()
	if recentOnly {
		start = q.Now.Add(-7 * 24 * time.Hour)
	}
	all, err := eng.FundingPayments(q.Key, symbol, start, 1<<30)
	if err != nil {
		return nil, Errf(500, -1000, "%v", err)
	}
	slices.Reverse(all) // oldest first
	var picked []paper.FundingPayment
	for _, p := range all {
		if end.IsZero() || !p.Time.After(end) {
			picked = append(picked, p)
		}
	}
	if recentOnly && len(picked) > limit {
		picked = picked[len(picked)-limit:]
	} else {
		from := min((page-1)*limit, len(picked))
		picked = picked[from:min(from+limit, len(picked))]
	}
	syms := eng.MarketSymbols()
	out := make([]map[string]any, 0, len(picked))
	for _, p := range picked {
		out = append(out, map[string]any{
			"symbol": p.Market, "incomeType": "FUNDING_FEE", "income": p.Amount.StringFixed(8), "asset": "USDT",
			"info": "FUNDING_FEE", "time": p.Time.UnixMilli(),
			"tranId": p.Time.Unix()*100 + int64(slices.Index(syms, p.Market)), "tradeId": "",
		})
	}
	return out, nil
}

// msRange reads startTime and endTime (Unix ms, both optional).
func msRange(q *Req) (start, end time.Time, e *APIErr) {
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"startTime", &start}, {"endTime", &end}} {
		if v := q.Get(f.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return start, end, BadParam(f.name)
			}
			*f.dst = time.UnixMilli(n)
		}
	}
	return start, end, nil
}
