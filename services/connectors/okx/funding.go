package okx

import (
	"context"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// billsPerCall is the most bills one bills-archive page holds.
const billsPerCall = 100

// bill is one bill of GET /api/v5/account/bills-archive.
type bill struct {
	BillID text   `json:"billId"`
	InstID string `json:"instId"`
	Type   string `json:"type"`
	BalChg dec    `json:"balChg"` // signed: negative when paid
	TS     ms     `json:"ts"`
}

// GetFundingPayments implements connector.FundingPaymentsReader with GET
// /api/v5/account/bills-archive?type=8 (funding fee bills of the last
// three months), newest first; the next page starts after the last
// billId. OKX's bills give neither rate nor position size.
func (a *Adapter) GetFundingPayments(ctx context.Context, c connector.Credential, m *connector.Market, since int64, limit int) ([]contract.FundingPayment, error) {
	rows, err := connector.Paginate(ctx, limit, func(ctx context.Context, after string) ([]bill, string, error) {
		q := params{}.Add("instType", "SWAP").Add("type", "8").Add("limit", strconv.Itoa(billsPerCall))
		if m != nil {
			q = q.Add("instId", m.Native)
		}
		if since > 0 {
			q = q.Add("begin", strconv.FormatInt(since*1000, 10))
		}
		if after != "" {
			q = q.Add("after", after)
		}
		var page []bill
		if err := a.get(ctx, c, "/api/v5/account/bills-archive", q, rule{n: 5}, &page); err != nil {
			return nil, "", err
		}
		if len(page) == 0 {
			return nil, "", nil
		}
		return page, string(page[len(page)-1].BillID), nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]contract.FundingPayment, 0, len(rows))
	for _, b := range rows {
		if b.Type == "8" {
			out = append(out, contract.FundingPayment{Market: b.InstID, Amount: b.BalChg.Decimal, Time: int64(b.TS) / 1000})
		}
	}
	return out, nil
}

// Capabilities implements connector.Declarer: batch-orders takes 20;
// algo orders trigger on the mark price; a TP/SL pair is one OCO algo
// order (LinksProtection); cancel-all is a listing plus
// cancel-batch-orders; cancel-all-after is OKX's own switch; amend-order
// changes price and size; fills-history reaches three months.
func (a *Adapter) Capabilities() connector.Capabilities {
	return connector.Capabilities{
		Operations: connector.Supports([]string{contract.OpCancelAllOrders, contract.OpCloseAllPositions}),
		Features: contract.Features{
			MaxBatchSize: batchSize, LinkedProtection: a.LinksProtection(), TriggerPriceType: "mark", MinNotionalPrice: "limit",
			FundingIntervalHours: 8, Amendable: []string{"price", "size"}, DeadManSwitch: contract.Native,
			FillsHistoryDays: 90, OpenInterest: true,
		},
	}
}
