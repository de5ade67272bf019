package binance

import (
	"context"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
)

// GetFundingPayments implements connector.FundingPaymentsReader with GET
// /fapi/v1/income?incomeType=FUNDING_FEE, paged (fapi.FundingPayments).
// Binance gives neither rate nor position size.
func (a *Adapter) GetFundingPayments(ctx context.Context, c connector.Credential, m *connector.Market, since int64, _ int) ([]contract.FundingPayment, error) {
	return fapi.FundingPayments(ctx, a.signed, "/fapi/v1/income", c, m, since, a.c.now())
}

// Capabilities implements connector.Declarer (fact sheet: batchOrders
// takes 5; STOP_MARKET/TAKE_PROFIT_MARKET trigger on MARK_PRICE;
// countdownCancelAll; PUT /fapi/v1/order amends price and quantity).
func (a *Adapter) Capabilities() connector.Capabilities {
	return connector.Capabilities{
		Operations: connector.Supports([]string{contract.OpPlaceProtectionOrders, contract.OpCloseAllPositions}),
		Features: contract.Features{
			MaxBatchSize: fapi.BatchSize, LinkedProtection: false, TriggerPriceType: "mark", MinNotionalPrice: "limit",
			FundingIntervalHours: 8, Amendable: []string{"price", "size"}, DeadManSwitch: contract.Native,
			FillsHistoryDays: 180, OpenInterest: true,
		},
	}
}
