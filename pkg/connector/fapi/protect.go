package fapi

import (
	"context"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Leg places one reduce-only conditional order on the mark price and
// returns its id.
type Leg func(ctx context.Context, side contract.Side, typ string, trigger decimal.Decimal, clientID string) (string, error)

// Protect places p's two reduce-only conditional orders on the side that
// closes the position: TAKE_PROFIT_MARKET and STOP_MARKET. The venues do
// not link them; when the second leg fails the first is cancelled again.
func (pl *Placer) Protect(ctx context.Context, c connector.Credential, p connector.ProtectionRequest,
	place Leg, cancel func(ctx context.Context, id string) error) (contract.ProtectionResult, error) {
	for _, leg := range []string{"-tp", "-sl"} {
		if err := pl.CheckID(p.ClientOrderID + leg); err != nil {
			return contract.ProtectionResult{}, err
		}
	}
	if err := pl.OneWay(ctx, c); err != nil {
		return contract.ProtectionResult{}, err
	}
	side := contract.Sell
	if p.PositionSide == contract.Short {
		side = contract.Buy
	}
	var res contract.ProtectionResult
	var err error
	if p.TakeProfit != nil {
		if res.TPOrderID, err = place(ctx, side, "TAKE_PROFIT_MARKET", *p.TakeProfit, p.ClientOrderID+"-tp"); err != nil {
			return contract.ProtectionResult{}, err
		}
	}
	if p.StopLoss != nil {
		if res.SLOrderID, err = place(ctx, side, "STOP_MARKET", *p.StopLoss, p.ClientOrderID+"-sl"); err != nil {
			if res.TPOrderID != "" {
				_ = cancel(context.WithoutCancel(ctx), res.TPOrderID)
			}
			return contract.ProtectionResult{}, err
		}
	}
	return res, nil
}
