package sim

import (
	"net/http"
	"strconv"
	"time"
)

// fundingPayments serves GET /v1/funding/payments
// (https://docs.paradex.trade/api/prod/account/get-funding) from the
// funding payments the paper engine books: market required; start_at and
// end_at (ms) bound created_at; page_size default 100, up to 5000; next
// is the cursor of the following page (absent on the last). Newest first;
// payment is signed (negative when the account paid).
func (s *Server) fundingPayments(q *req) (int, any, *apiErr) {
	market := q.get("market")
	if market == "" {
		return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "market is required")
	}
	if _, e := s.market(market); e != nil {
		return 0, nil, e
	}
	size := 100
	if v := q.get("page_size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 5000 {
			return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "page_size must be 1 to 5000")
		}
		size = n
	}
	if s.cfg.PageCap > 0 {
		size = min(size, s.cfg.PageCap)
	}
	var bounds [3]int64 // start_at, end_at, cursor
	for i, name := range []string{"start_at", "end_at", "cursor"} {
		if v := q.get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "%s is invalid", name)
			}
			bounds[i] = n
		}
	}
	all, err := s.eng.FundingPayments(q.account, market, time.UnixMilli(bounds[0]), 1<<30)
	if err != nil {
		return 0, nil, errf(http.StatusInternalServerError, "INTERNAL_ERROR", "%v", err)
	}
	var rows []map[string]any
	for _, p := range all {
		if bounds[1] > 0 && p.Time.UnixMilli() > bounds[1] {
			continue
		}
		ms := p.Time.UnixMilli()
		rows = append(rows, map[string]any{"id": p.Market + "-" + strconv.FormatInt(ms, 10), "account": q.account,
			"market": p.Market, "payment": p.Amount.String(), "index": "0", "fill_id": "", "created_at": ms})
	}
	from := min(int(bounds[2]), len(rows))
	page := rows[from:min(from+size, len(rows))]
	out := results(page)
	if from+size < len(rows) {
		out["next"] = strconv.Itoa(from + size)
	}
	return ok(out)
}
