package connector

import (
	"context"
	"sort"

	"github.com/perpgate/perpgate/pkg/contract"
)

// fundingPayments serves getFundingPayments: the adapter's payments with
// canonical markets, newest first, filtered and cut to the limit asked
// (a venue may answer more than one page holds, or ignore a bound).
func (d dispatch) fundingPayments(ctx context.Context, p *contract.FundingPaymentsParams) (any, error) {
	fr, ok := d.r.adapter.(FundingPaymentsReader)
	if !ok {
		return nil, unsupported(d.r.adapter, contract.OpGetFundingPayments)
	}
	m, err := d.optMarket(ctx, p.Market)
	if err != nil {
		return nil, err
	}
	pays, err := fr.GetFundingPayments(ctx, d.cred, m, int64(p.Since), p.Limit)
	if err != nil {
		return nil, err
	}
	out := make([]contract.FundingPayment, 0, len(pays))
	for _, pay := range pays {
		pay.Market = d.canon(ctx, pay.Market)
		if (m != nil && pay.Market != m.Canonical) || pay.Time < int64(p.Since) {
			continue
		}
		out = append(out, pay)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time > out[j].Time })
	if len(out) > p.Limit {
		out = out[:p.Limit]
	}
	return contract.FundingPaymentsResult{Payments: out}, nil
}

// maxPages bounds how many pages Paginate reads for one answer.
const maxPages = 50

// Paginate reads pages of a venue history until it holds want items, the
// venue has no more (an empty next cursor or an empty page) or maxPages
// were read. fetch gets the cursor of the page to read ("" for the first)
// and answers its items and the next page's cursor.
func Paginate[T any](ctx context.Context, want int, fetch func(ctx context.Context, cursor string) ([]T, string, error)) ([]T, error) {
	var out []T
	cursor := ""
	for range maxPages {
		items, next, err := fetch(ctx, cursor)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if len(out) >= want || len(items) == 0 || next == "" || next == cursor {
			break
		}
		cursor = next
	}
	return out, nil
}
