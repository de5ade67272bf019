package paradex

import (
	"github.com/perpgate/perpgate/pkg/connector"
)

// dec is a decimal as Paradex writes it: a string, sometimes empty (not
// Given), or a number (funding_period_hours, margin leverage): the shared
// lenient decoder.
type dec = connector.Decimal

// list is every list answer: {"results":[...]} with optional cursors.
type list[T any] struct {
	Results []T    `json:"results"`
	Next    string `json:"next"`
}

// systemConfig is GET /system/config (the fields used).
type systemConfig struct {
	StarknetChainID           string `json:"starknet_chain_id"`
	ParaclearAccountHash      string `json:"paraclear_account_hash"`
	ParaclearAccountProxyHash string `json:"paraclear_account_proxy_hash"`
}

// marketResp is one row of GET /markets (OpenAPI responses.MarketResp).
type marketResp struct {
	Symbol             string `json:"symbol"`
	BaseCurrency       string `json:"base_currency"`
	QuoteCurrency      string `json:"quote_currency"`
	SettlementCurrency string `json:"settlement_currency"`
	AssetKind          string `json:"asset_kind"`
	PriceTickSize      dec    `json:"price_tick_size"`
	OrderSizeIncrement dec    `json:"order_size_increment"`
	MinNotional        dec    `json:"min_notional"`
	MaxOrderSize       dec    `json:"max_order_size"`
	FundingPeriodHours dec    `json:"funding_period_hours"`
	FeeConfig          struct {
		APIFee struct {
			MakerFee struct {
				Fee dec `json:"fee"`
			} `json:"maker_fee"`
			TakerFee struct {
				Fee dec `json:"fee"`
			} `json:"taker_fee"`
		} `json:"api_fee"`
	} `json:"fee_config"`
	// Delta1CrossMarginParams.IMFBase is the initial margin fraction at the
	// smallest size: its inverse is the largest leverage.
	Delta1CrossMarginParams struct {
		IMFBase dec `json:"imf_base"`
	} `json:"delta1_cross_margin_params"`
}

// summaryResp is one row of GET /markets/summary.
type summaryResp struct {
	Symbol          string        `json:"symbol"`
	MarkPrice       dec           `json:"mark_price"`
	UnderlyingPrice dec           `json:"underlying_price"`
	FundingRate     dec           `json:"funding_rate"`
	OpenInterest    dec           `json:"open_interest"`
	CreatedAt       connector.Int `json:"created_at"`
}

// bookResp is GET /orderbook/{market}: levels are [price, size] strings.
type bookResp struct {
	Market string   `json:"market"`
	Bids   [][2]dec `json:"bids"`
	Asks   [][2]dec `json:"asks"`
}

// accountResp is GET /account (AccountSummaryResponse).
type accountResp struct {
	Account         string `json:"account"`
	AccountValue    dec    `json:"account_value"`
	FreeCollateral  dec    `json:"free_collateral"`
	TotalCollateral dec    `json:"total_collateral"`
	Status          string `json:"status"`
}

// positionResp is one row of GET /positions.
type positionResp struct {
	Market            string `json:"market"`
	Side              string `json:"side"`
	Size              dec    `json:"size"`
	AverageEntryPrice dec    `json:"average_entry_price"`
	UnrealizedPnl     dec    `json:"unrealized_pnl"`
	Leverage          dec    `json:"leverage"`
	Status            string `json:"status"`
}

// orderResp is OpenAPI responses.OrderResp. id is a 28-digit string.
type orderResp struct {
	ID            string        `json:"id"`
	ClientID      string        `json:"client_id"`
	Market        string        `json:"market"`
	Side          string        `json:"side"`
	Type          string        `json:"type"`
	Size          dec           `json:"size"`
	RemainingSize dec           `json:"remaining_size"`
	Price         dec           `json:"price"`
	TriggerPrice  dec           `json:"trigger_price"`
	Status        string        `json:"status"`
	CreatedAt     connector.Int `json:"created_at"`
	Flags         []string      `json:"flags"`
	Instruction   string        `json:"instruction"`
	AvgFillPrice  dec           `json:"avg_fill_price"`
	CancelReason  string        `json:"cancel_reason"`
}

// fillResp is one row of GET /fills.
type fillResp struct {
	ID          string        `json:"id"`
	OrderID     string        `json:"order_id"`
	ClientID    string        `json:"client_id"`
	Market      string        `json:"market"`
	Side        string        `json:"side"`
	Size        dec           `json:"size"`
	Price       dec           `json:"price"`
	Fee         dec           `json:"fee"`
	FeeCurrency string        `json:"fee_currency"`
	Liquidity   string        `json:"liquidity"`
	FillType    string        `json:"fill_type"`
	CreatedAt   connector.Int `json:"created_at"`
	// RealizedPnl is what the fill closed; empty when Paradex leaves it out.
	RealizedPnl dec `json:"realized_pnl"`
}

// batchResp is POST /orders/batch's 201 answer.
type batchResp struct {
	Orders []orderResp `json:"orders"`
	Errors []*apiError `json:"errors"`
}

// marginConfigs is GET /account/margin: the account's per-market margin
// settings.
type marginConfigs struct {
	Configs []struct {
		Market   string `json:"market"`
		Leverage dec    `json:"leverage"`
	} `json:"configs"`
}

// marginBody is POST /account/margin/{market}.
type marginBody struct {
	Leverage   int    `json:"leverage"`
	MarginType string `json:"margin_type"`
}

// authResp is POST /auth's answer.
type authResp struct {
	JWTToken string `json:"jwt_token"`
}
