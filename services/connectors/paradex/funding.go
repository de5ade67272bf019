package paradex

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// fundingPage is the page size asked of GET /funding/payments (its most).
const fundingPage = 5000

// fundingPayment is one entry of GET /funding/payments.
type fundingPayment struct {
	Market    string        `json:"market"`
	Payment   dec           `json:"payment"` // signed: negative when paid
	CreatedAt connector.Int `json:"created_at"`
}

// GetFundingPayments implements connector.FundingPaymentsReader with GET
// /funding/payments, page by page with its cursor. Paradex wants a
// market, so without one the markets read are those of the account's
// positions and of its last fills. Paradex gives neither rate nor
// position size.
func (a *Adapter) GetFundingPayments(ctx context.Context, c connector.Credential, m *connector.Market, since int64, limit int) ([]contract.FundingPayment, error) {
	markets, err := a.fundedMarkets(ctx, c, m)
	if err != nil {
		return nil, err
	}
	var out []contract.FundingPayment
	for _, market := range markets {
		rows, err := connector.Paginate(ctx, limit, func(ctx context.Context, cursor string) ([]fundingPayment, string, error) {
			q := url.Values{"market": {market}, "page_size": {strconv.Itoa(min(limit, fundingPage))}}
			if since > 0 {
				q.Set("start_at", strconv.FormatInt(since*1000, 10))
			}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			var l list[fundingPayment]
			if err := a.private(ctx, c, http.MethodGet, "/funding/payments", q, nil, &l); err != nil {
				return nil, "", err
			}
			return l.Results, l.Next, nil
		})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, contract.FundingPayment{Market: r.Market, Amount: r.Payment.D(), Time: int64(r.CreatedAt) / 1000})
		}
	}
	return out, nil
}

// fundedMarkets is m, or the markets of the account's positions (open or
// closed) and of its last fills.
func (a *Adapter) fundedMarkets(ctx context.Context, c connector.Credential, m *connector.Market) ([]string, error) {
	if m != nil {
		return []string{m.Native}, nil
	}
	var ps list[positionResp]
	if err := a.private(ctx, c, http.MethodGet, "/positions", nil, nil, &ps); err != nil {
		return nil, err
	}
	fills, err := a.fills(ctx, c, url.Values{}, fundingPage)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range ps.Results {
		out = append(out, p.Market)
	}
	for _, f := range fills {
		out = append(out, f.Market)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Capabilities implements connector.Declarer: orders/batch takes 10;
// triggers fire on the mark price; protection pairs are the gateway's
// (LinksProtection is false); DELETE /orders cancels a market's orders;
// closing is reduce-only market orders; modify-order changes price and
// size; cancel-on-disconnect is no timer, so the switch is the gateway's.
func (a *Adapter) Capabilities() connector.Capabilities {
	return connector.Capabilities{
		Operations: connector.Supports([]string{contract.OpPlaceProtectionOrders, contract.OpCloseAllPositions}),
		Features: contract.Features{
			MaxBatchSize: batchSize, LinkedProtection: a.LinksProtection(), TriggerPriceType: "mark", MinNotionalPrice: "limit",
			FundingIntervalHours: 8, Amendable: []string{"price", "size"}, DeadManSwitch: contract.Emulated,
			FillsHistoryDays: 3650, OpenInterest: true,
		},
	}
}
