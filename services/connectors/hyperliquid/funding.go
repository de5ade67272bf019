package hyperliquid

import (
	"context"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// fundingLookback is how far back getFundingPayments reads without since:
// funding is hourly here, so a week is 168 entries per coin.
const fundingLookback = 7 * 24 * time.Hour

// fundingEntry is one entry of the userFunding info request.
type fundingEntry struct {
	Time  connector.Int `json:"time"` // ms
	Delta fundingDelta  `json:"delta"`
}

// fundingDelta is one funding payment (userFunding's delta, an entry of
// the userFundings push).
type fundingDelta struct {
	Type        string `json:"type"`
	Coin        string `json:"coin"`
	USDC        string `json:"usdc"` // signed: negative when paid
	Szi         string `json:"szi"`  // the position, signed
	FundingRate string `json:"fundingRate"`
}

// GetFundingPayments implements connector.FundingPaymentsReader with the
// userFunding info request: oldest first from startTime, up to 500 a
// page, the next page starting at the last time (inclusive; entries of
// that millisecond already read are skipped). The runtime keeps the
// newest and filters the market (userFunding has no coin filter).
func (a *Adapter) GetFundingPayments(ctx context.Context, c connector.Credential, m *connector.Market, since int64, limit int) ([]contract.FundingPayment, error) {
	start := since * 1000
	if since == 0 {
		start = a.now().Add(-fundingLookback).UnixMilli()
	}
	entries, err := venuekit.TimePages(ctx, start, func(ctx context.Context, from int64) ([]fundingEntry, error) {
		var page []fundingEntry
		err := a.userInfo(ctx, c, &page, "userFunding", "startTime", from)
		return page, err
	}, func(e fundingEntry) int64 { return int64(e.Time) },
		func(e fundingEntry) string { return strconv.FormatInt(int64(e.Time), 10) + " " + e.Delta.Coin })
	if err != nil {
		return nil, err
	}
	out := make([]contract.FundingPayment, 0, len(entries))
	for _, e := range entries {
		if e.Delta.Type != "funding" || (m != nil && e.Delta.Coin != m.Native) {
			continue
		}
		rate, size := dec(e.Delta.FundingRate), dec(e.Delta.Szi)
		out = append(out, contract.FundingPayment{Market: e.Delta.Coin, Amount: dec(e.Delta.USDC), Rate: &rate, PositionSize: &size, Time: int64(e.Time) / 1000})
	}
	return out, nil
}

// Capabilities implements connector.Declarer: one order action carries
// many orders (the gateway sends up to 10); triggers fire on the mark
// price; position TP/SL are linked (LinksProtection); cancel-all and
// close-all are the gateway's (a cancel action per order, reduce-only IOC
// orders); scheduleCancel is Hyperliquid's own switch; modify changes
// price, size and trigger price; userFillsByTime reaches every fill, the
// gateway reads up to 2000.
func (a *Adapter) Capabilities() connector.Capabilities {
	return connector.Capabilities{
		Operations: connector.Supports([]string{contract.OpPlaceMarketOrder, contract.OpCancelAllOrders, contract.OpCloseAllPositions}),
		Features: contract.Features{
			MaxBatchSize: 10, LinkedProtection: a.LinksProtection(), TriggerPriceType: "mark", MinNotionalPrice: "limit",
			FundingIntervalHours: 1, Amendable: []string{"price", "size", "triggerPrice"}, DeadManSwitch: contract.Native,
			FillsHistoryDays: 3650, OpenInterest: true,
		},
	}
}
