package venue

import (
	"context"
	"net/http"
	"time"

	"github.com/shopspring/decimal"
)

// FundingPayment is one funding payment booked on a position: Amount is
// what the wallet got (negative when paid), PositionSize is signed.
type FundingPayment struct {
	Market       string          `json:"market"`
	Amount       decimal.Decimal `json:"amount"`
	Rate         decimal.Decimal `json:"rate"`
	PositionSize decimal.Decimal `json:"positionSize"`
	Time         int64           `json:"time"`
}

// FundingPaymentsResponse lists funding payments newest first.
type FundingPaymentsResponse struct {
	Payments []FundingPayment `json:"payments"`
}

// GET /v1/accounts/{account}/funding?market=&since=&limit=
func (h *handler) fundingPayments(r *http.Request) (any, error) {
	limit, err := intQuery(r, "limit")
	if err != nil {
		return nil, err
	}
	since, err := intQuery(r, "since")
	if err != nil {
		return nil, err
	}
	if limit < 0 || since < 0 {
		return nil, badRequest("limit and since must not be negative")
	}
	var from time.Time
	if since > 0 {
		from = time.Unix(int64(since), 0)
	}
	ps, err := h.e.FundingPayments(r.PathValue("account"), r.URL.Query().Get("market"), from, limit)
	if err != nil {
		return nil, err
	}
	out := FundingPaymentsResponse{Payments: make([]FundingPayment, len(ps))}
	for i, p := range ps {
		out.Payments[i] = FundingPayment{Market: p.Market, Amount: p.Amount, Rate: p.Rate,
			PositionSize: p.PositionSize, Time: p.Time.Unix()}
	}
	return out, nil
}

// FundingPayments returns up to limit (0 means 100) funding payments,
// newest first, on market or (market "") all, at or after since (Unix
// seconds, 0 for no bound).
func (c *Client) FundingPayments(ctx context.Context, account, market string, since int64, limit int) ([]FundingPayment, error) {
	var out FundingPaymentsResponse
	err := c.do(ctx, http.MethodGet, accountPath(account, "/funding"), query("market", market, "since", int(since), "limit", limit), nil, &out)
	return out.Payments, err
}
