package bybit

import (
	"context"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Transaction log ranges (account/transaction-log): at most 7 days per
// request and 50 entries per page. Without since the history goes back
// logWindows windows (about three months).
const (
	logWindow  = 7 * 24 * time.Hour
	logPage    = 50
	logWindows = 13
)

// settlement is one SETTLEMENT entry of GET /v5/account/transaction-log.
type settlement struct {
	Symbol          string `json:"symbol"`
	Side            string `json:"side"`
	TransactionTime string `json:"transactionTime"` // ms
	Type            string `json:"type"`
	Size            dec    `json:"size"`    // the position, signed
	Funding         dec    `json:"funding"` // positive when received
	FeeRate         dec    `json:"feeRate"` // the funding rate; negated for side Sell
}

type transactionLog struct {
	List           []settlement `json:"list"`
	NextPageCursor string       `json:"nextPageCursor"`
}

// GetFundingPayments implements connector.FundingPaymentsReader with GET
// /v5/account/transaction-log?type=SETTLEMENT, newest first: 7-day windows
// back from now, each read page by page with its cursor, until limit
// payments, since, or about three months when since is 0. The market is
// filtered here: baseCoin would not tell 1000PEPE from PEPE listings.
func (a *Adapter) GetFundingPayments(ctx context.Context, c connector.Credential, m *connector.Market, since int64, limit int) ([]contract.FundingPayment, error) {
	var out []contract.FundingPayment
	end := a.c.Now()
	for i := 0; len(out) < limit && (since > 0 || i < logWindows); i++ {
		start := end.Add(-logWindow)
		if since > 0 && start.Unix() < since {
			start = time.Unix(since, 0)
		}
		got, err := a.settlements(ctx, c, m, start, end, limit-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		if since > 0 && start.Unix() <= since {
			break
		}
		end = start.Add(-time.Millisecond)
	}
	return out, nil
}

// settlements reads one window's funding settlements, page by page.
func (a *Adapter) settlements(ctx context.Context, c connector.Credential, m *connector.Market, start, end time.Time, want int) ([]contract.FundingPayment, error) {
	rows, err := connector.Paginate(ctx, want, func(ctx context.Context, cursor string) ([]settlement, string, error) {
		q := params{}.Add("accountType", "UNIFIED").Add("category", category).Add("type", "SETTLEMENT").
			Add("startTime", strconv.FormatInt(start.UnixMilli(), 10)).Add("endTime", strconv.FormatInt(end.UnixMilli(), 10)).
			Add("limit", strconv.Itoa(logPage))
		if cursor != "" {
			q = q.Add("cursor", cursor)
		}
		var page transactionLog
		if err := a.get(ctx, c, "/v5/account/transaction-log", q, &page); err != nil {
			return nil, "", err
		}
		return page.List, page.NextPageCursor, nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]contract.FundingPayment, 0, len(rows))
	for _, r := range rows {
		if r.Type != "SETTLEMENT" || (m != nil && r.Symbol != m.Native) {
			continue
		}
		ms, _ := strconv.ParseInt(r.TransactionTime, 10, 64)
		rate, size := r.FeeRate.D(), r.Size.D()
		if r.Side == "Sell" {
			rate = rate.Neg()
		}
		out = append(out, contract.FundingPayment{Market: r.Symbol, Amount: r.Funding.D(), Rate: &rate, PositionSize: &size, Time: ms / 1000})
	}
	return out, nil
}

// Capabilities implements connector.Declarer: create-batch takes 10;
// conditional orders trigger on MarkPrice; amend-order changes price,
// size and trigger price; the execution list gives no realized PnL and
// goes back two years; there is no cancel-all-after timer for linear
// contracts outside market-maker programmes, so the dead man's switch is
// the gateway's.
func (a *Adapter) Capabilities() connector.Capabilities {
	return connector.Capabilities{
		Operations: connector.Supports([]string{contract.OpPlaceProtectionOrders, contract.OpCloseAllPositions}),
		Features: contract.Features{
			MaxBatchSize: batchSize, LinkedProtection: false, TriggerPriceType: "mark", MinNotionalPrice: "limit",
			FundingIntervalHours: 8, Amendable: []string{"price", "size", "triggerPrice"}, DeadManSwitch: contract.Emulated,
			FillsHistoryDays: 730, OpenInterest: true,
		},
	}
}
