package fapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Reads are the signed account reads whose shape both venues share.
type Reads struct {
	Signed  Signed
	Fees    string // Commission Rate's path
	Balance string // Account Information's path
	Trades  string // Account Trade List's path
	Income  string // Get Income History's path
	Fill    func(UserTrade) contract.Fill
	Now     func() time.Time
}

// GetFeeInfo implements connector.Adapter: the account's commission rates
// in basis points.
func (r *Reads) GetFeeInfo(ctx context.Context, c connector.Credential, m connector.Market) (contract.FeeInfoResult, error) {
	var cr CommissionRate
	if err := r.Signed(ctx, c, http.MethodGet, r.Fees, SymbolParam(m), 20, &cr); err != nil {
		return contract.FeeInfoResult{}, err
	}
	return contract.FeeInfoResult{MakerFee: venuekit.Bps(cr.MakerCommissionRate), TakerFee: venuekit.Bps(cr.TakerCommissionRate)}, nil
}

// GetBalance implements connector.Adapter: equity is the margin balance
// (wallet plus unrealized PnL), accountValue the wallet balance.
func (r *Reads) GetBalance(ctx context.Context, c connector.Credential) (contract.BalanceResult, error) {
	var acct Account
	if err := r.Signed(ctx, c, http.MethodGet, r.Balance, nil, 5, &acct); err != nil {
		return contract.BalanceResult{}, err
	}
	return contract.BalanceResult{Equity: acct.TotalMarginBalance, FreeCollateral: acct.AvailableBalance, AccountValue: acct.TotalWalletBalance}, nil
}

// GetFills implements connector.Adapter, newest first (the venue answers
// oldest first).
func (r *Reads) GetFills(ctx context.Context, c connector.Credential, m connector.Market, limit int) (contract.FillsResult, error) {
	var trades []UserTrade
	if err := r.Signed(ctx, c, http.MethodGet, r.Trades, SymbolParam(m).Add("limit", strconv.Itoa(limit)), 5, &trades); err != nil {
		return contract.FillsResult{}, err
	}
	out := make([]contract.Fill, 0, len(trades))
	for i := len(trades) - 1; i >= 0; i-- {
		out = append(out, r.Fill(trades[i]))
	}
	return contract.FillsResult{Fills: out}, nil
}
