package fapi

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Signed makes one signed call of the venue's client: the venue's
// signing, the operations' shared shapes.
type Signed func(ctx context.Context, c connector.Credential, method, path string, p connector.Query, weight int, out any) error

// incomeRetention is how far back GET income reaches (three
// months), the start of a history asked without since.
const incomeRetention = 90 * 24 * time.Hour

// incomePage is the most entries one income page holds.
const incomePage = 1000

// incomeEntry is one entry of GET income.
type incomeEntry struct {
	Symbol string            `json:"symbol"`
	Type   string            `json:"incomeType"`
	Income connector.Decimal `json:"income"`
	Time   connector.Int     `json:"time"` // Unix ms
	TranID connector.Int     `json:"tranId"`
}

// GetFundingPayments implements connector.FundingPaymentsReader with GET
// income?incomeType=FUNDING_FEE (weight 30, Aster fact sheet §11), read
// as Binance's Get Income History, which Aster's API follows: oldest first
// from startTime, a page at a time (page=1, 2, ...), so the pages run
// forward from since to now and the runtime keeps the newest. The venues
// give neither rate nor position size.
func (r *Reads) GetFundingPayments(ctx context.Context, c connector.Credential, m *connector.Market, since int64, _ int) ([]contract.FundingPayment, error) {
	start := since * 1000
	if since == 0 {
		start = r.Now().Add(-incomeRetention).UnixMilli()
	}
	entries, err := connector.Paginate(ctx, math.MaxInt, func(ctx context.Context, cursor string) ([]incomeEntry, string, error) {
		page := 1
		if cursor != "" {
			page, _ = strconv.Atoi(cursor)
		}
		p := connector.Query{}.Add("incomeType", "FUNDING_FEE").Add("startTime", strconv.FormatInt(start, 10)).
			Add("page", strconv.Itoa(page)).Add("limit", strconv.Itoa(incomePage))
		if m != nil {
			p = p.Add("symbol", m.Native)
		}
		var got []incomeEntry
		if err := r.Signed(ctx, c, http.MethodGet, r.Income, p, 30, &got); err != nil {
			return nil, "", err
		}
		return got, strconv.Itoa(page + 1), nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]contract.FundingPayment, 0, len(entries))
	for _, e := range entries {
		if e.Type == "FUNDING_FEE" {
			out = append(out, contract.FundingPayment{Market: e.Symbol, Amount: e.Income.D(), Time: int64(e.Time) / 1000})
		}
	}
	return out, nil
}
