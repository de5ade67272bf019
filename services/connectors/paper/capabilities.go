package paper

import (
	"context"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Capabilities implements connector.Declarer: the paper venue's own API
// (package venue) does every operation itself, except a few the gateway
// composes.
func (a *Adapter) Capabilities() connector.Capabilities {
	return connector.Capabilities{
		Operations: connector.Supports([]string{contract.OpPlaceBatchOrder}),
		Features: contract.Features{
			MaxBatchSize: 10, LinkedProtection: a.LinksProtection(), TriggerPriceType: "mark", MinNotionalPrice: "limit",
			FundingIntervalHours: 8, Amendable: []string{}, DeadManSwitch: contract.Emulated,
			FillsHistoryDays: 3650, OpenInterest: true,
		},
	}
}

// GetFundingPayments implements connector.FundingPaymentsReader from the
// venue's record of each payment its engine books.
func (a *Adapter) GetFundingPayments(ctx context.Context, c connector.Credential, m *connector.Market, since int64, limit int) ([]contract.FundingPayment, error) {
	acct, err := a.account(ctx, c)
	if err != nil {
		return nil, err
	}
	market := ""
	if m != nil {
		market = m.Native
	}
	ps, err := a.venue.FundingPayments(ctx, acct, market, since, limit)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]contract.FundingPayment, len(ps))
	for i, p := range ps {
		out[i] = contract.FundingPayment{Market: p.Market, Amount: p.Amount, Rate: &p.Rate, PositionSize: &p.PositionSize, Time: p.Time}
	}
	return out, nil
}
