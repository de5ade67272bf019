package sim

import (
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
)

// window is the longest range one transaction-log request covers.
const window = 7 * 24 * time.Hour

// transactionLog serves GET /v5/account/transaction-log
// (https://bybit-exchange.github.io/docs/v5/account/transaction-log) from
// the funding payments the paper engine books: SETTLEMENT entries only,
// newest first. Range: neither startTime nor endTime → the last 7 days;
// only one → 7 days from or to it; both → at most 7 days apart (10001
// otherwise). limit [1, 50], default 20; nextPageCursor pages on. funding
// is positive when received; size is the position, signed; feeRate is
// the funding rate, negated for a short (side Sell), as the page says.
func (s *Server) transactionLog(q *req) (any, *apiErr) {
	if c := q.get("category"); c != "" && c != "linear" {
		return nil, errf(10001, "params error: category only support linear here")
	}
	limit, e := q.limit(20, 50)
	if e != nil {
		return nil, e
	}
	if s.cfg.PageCap > 0 {
		limit = min(limit, s.cfg.PageCap)
	}
	start, end, e := logRange(q)
	if e != nil {
		return nil, e
	}
	offset := 0
	if c := q.get("cursor"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 {
			return nil, errf(10001, "params error: cursor invalid")
		}
		offset = n
	}
	all, err := s.eng.FundingPayments(q.key, "", start, 1<<30)
	if err != nil {
		return nil, errf(10016, "%v", err)
	}
	var rows []map[string]any
	for _, p := range all {
		if p.Time.After(end) || (q.get("type") != "" && q.get("type") != "SETTLEMENT") {
			continue
		}
		if cur := q.get("currency"); cur != "" && cur != "USDT" {
			continue
		}
		rows = append(rows, settlementRow(p))
	}
	next := ""
	if offset > len(rows) {
		offset = len(rows)
	}
	page := rows[offset:min(offset+limit, len(rows))]
	if offset+limit < len(rows) {
		next = strconv.Itoa(offset + limit)
	}
	if page == nil {
		page = []map[string]any{}
	}
	return map[string]any{"list": page, "nextPageCursor": next}, nil
}

func settlementRow(p paper.FundingPayment) map[string]any {
	side, rate := "Buy", p.Rate
	if p.PositionSize.IsNegative() {
		side, rate = "Sell", p.Rate.Neg()
	}
	ms := p.Time.UnixMilli()
	return map[string]any{
		"id": p.Market + "-" + strconv.FormatInt(ms, 10), "symbol": p.Market, "category": "linear", "side": side,
		"transactionTime": strconv.FormatInt(ms, 10), "type": "SETTLEMENT", "qty": p.PositionSize.Abs().String(),
		"size": p.PositionSize.String(), "currency": "USDT", "tradePrice": "", "funding": p.Amount.String(), "fee": "0",
		"cashFlow": "0", "change": p.Amount.String(), "cashBalance": "", "feeRate": rate.String(), "bonusChange": "",
		"tradeId": "", "orderId": "", "orderLinkId": "",
	}
}

// logRange applies the 7-day rule of startTime and endTime.
func logRange(q *req) (start, end time.Time, e *apiErr) {
	var have [2]bool
	for i, name := range []string{"startTime", "endTime"} {
		v := q.get(name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return start, end, errf(10001, "params error: %s invalid", name)
		}
		have[i] = true
		if i == 0 {
			start = time.UnixMilli(n)
		} else {
			end = time.UnixMilli(n)
		}
	}
	switch {
	case !have[0] && !have[1]:
		end = q.now
		start = end.Add(-window)
	case !have[1]:
		end = start.Add(window)
	case !have[0]:
		start = end.Add(-window)
	case end.Sub(start) > window || end.Before(start):
		return start, end, errf(10001, "params error: endTime - startTime must be within 7 days")
	}
	return start, end, nil
}
