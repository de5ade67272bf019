package venue

import (
	"github.com/shopspring/decimal"
)

// MarketInfo is a market's specification and current state.
type MarketInfo struct {
	Symbol          string          `json:"symbol"`
	Base            string          `json:"base"`
	Quote           string          `json:"quote"`
	TickSize        decimal.Decimal `json:"tickSize"`
	LotSize         decimal.Decimal `json:"lotSize"`
	MinNotional     decimal.Decimal `json:"minNotional"`
	MaxLeverage     int             `json:"maxLeverage"`
	MarkPrice       decimal.Decimal `json:"markPrice"`
	IndexPrice      decimal.Decimal `json:"indexPrice"`
	FundingRate     decimal.Decimal `json:"fundingRate"`
	NextFundingTime int64           `json:"nextFundingTime"`
	OpenInterest    decimal.Decimal `json:"openInterest"`
	// FundingIntervalSeconds is what FundingRate covers.
	FundingIntervalSeconds int64 `json:"fundingIntervalSeconds"`
}

// MarketsResponse lists every market.
type MarketsResponse struct {
	Markets []MarketInfo `json:"markets"`
}

// Orderbook is the synthesized book; levels are [price, size], best first.
type Orderbook struct {
	Market string               `json:"market"`
	Bids   [][2]decimal.Decimal `json:"bids"`
	Asks   [][2]decimal.Decimal `json:"asks"`
	Time   int64                `json:"time"`
}

// MarkPrice is a market's mark and index price.
type MarkPrice struct {
	Market     string          `json:"market"`
	MarkPrice  decimal.Decimal `json:"markPrice"`
	IndexPrice decimal.Decimal `json:"indexPrice"`
	Time       int64           `json:"time"`
}

// SetMarkRequest moves a market's mark price.
type SetMarkRequest struct {
	Price decimal.Decimal `json:"price"`
}

// Candle is one OHLCV bar; Time is its start.
type Candle struct {
	Time   int64           `json:"time"`
	Open   decimal.Decimal `json:"open"`
	High   decimal.Decimal `json:"high"`
	Low    decimal.Decimal `json:"low"`
	Close  decimal.Decimal `json:"close"`
	Volume decimal.Decimal `json:"volume"`
}

// CandlesResponse lists bars oldest first.
type CandlesResponse struct {
	Market   string   `json:"market"`
	Interval int      `json:"interval"`
	Candles  []Candle `json:"candles"`
}

// Funding is a market's funding rate per interval and next funding time.
type Funding struct {
	Market          string          `json:"market"`
	FundingRate     decimal.Decimal `json:"fundingRate"`
	NextFundingTime int64           `json:"nextFundingTime"`
	IntervalSeconds int64           `json:"intervalSeconds"`
}

// Fees are maker and taker fees in basis points.
type Fees struct {
	MakerFeeBps decimal.Decimal `json:"makerFeeBps"`
	TakerFeeBps decimal.Decimal `json:"takerFeeBps"`
}

// AccountRequest creates an account; a zero or absent startingBalance means
// the venue's default.
type AccountRequest struct {
	StartingBalance decimal.Decimal `json:"startingBalance,omitzero"`
}

// Balance summarizes an account.
type Balance struct {
	Account        string          `json:"account"`
	Wallet         decimal.Decimal `json:"wallet"`
	UnrealizedPnl  decimal.Decimal `json:"unrealizedPnl"`
	Equity         decimal.Decimal `json:"equity"`
	AccountValue   decimal.Decimal `json:"accountValue"`
	PositionMargin decimal.Decimal `json:"positionMargin"`
	OrderMargin    decimal.Decimal `json:"orderMargin"`
	FreeCollateral decimal.Decimal `json:"freeCollateral"`
	RealizedPnl    decimal.Decimal `json:"realizedPnl"`
	FeesPaid       decimal.Decimal `json:"feesPaid"`
	FundingPaid    decimal.Decimal `json:"fundingPaid"`
}

// Position is an open position; Side is LONG or SHORT.
type Position struct {
	Market        string          `json:"market"`
	Side          string          `json:"side"`
	Size          decimal.Decimal `json:"size"`
	EntryPrice    decimal.Decimal `json:"entryPrice"`
	MarkPrice     decimal.Decimal `json:"markPrice"`
	UnrealizedPnl decimal.Decimal `json:"unrealizedPnl"`
	Notional      decimal.Decimal `json:"notional"`
	Margin        decimal.Decimal `json:"margin"`
	Leverage      int             `json:"leverage"`
}

// PositionsResponse lists open positions.
type PositionsResponse struct {
	Positions []Position `json:"positions"`
}

// OrderRequest places an order. Type is LIMIT, MARKET, STOP_MARKET or
// TAKE_PROFIT_MARKET; Side BUY or SELL.
type OrderRequest struct {
	Market        string          `json:"market"`
	Side          string          `json:"side"`
	Type          string          `json:"type"`
	Size          decimal.Decimal `json:"size"`
	Price         decimal.Decimal `json:"price,omitzero"`
	TriggerPrice  decimal.Decimal `json:"triggerPrice,omitzero"`
	PostOnly      bool            `json:"postOnly,omitempty"`
	ReduceOnly    bool            `json:"reduceOnly,omitempty"`
	ClientOrderID string          `json:"clientOrderId,omitempty"`
	// PositionLinked: a reduce-only trigger order cancelled when the
	// position it protects closes (protection legs).
	PositionLinked bool `json:"positionLinked,omitempty"`
}

// Order is an order; Status is OPEN, PENDING, FILLED, CANCELLED or REJECTED.
type Order struct {
	ID            string          `json:"id"`
	ClientOrderID string          `json:"clientOrderId,omitempty"`
	Market        string          `json:"market"`
	Side          string          `json:"side"`
	Type          string          `json:"type"`
	Size          decimal.Decimal `json:"size"`
	Price         decimal.Decimal `json:"price"`
	TriggerPrice  decimal.Decimal `json:"triggerPrice"`
	FilledSize    decimal.Decimal `json:"filledSize"`
	AvgFillPrice  decimal.Decimal `json:"avgFillPrice"`
	Fee           decimal.Decimal `json:"fee"`
	PostOnly      bool            `json:"postOnly"`
	ReduceOnly    bool            `json:"reduceOnly"`
	Status        string          `json:"status"`
	Reason        string          `json:"reason,omitempty"`
	CreatedAt     int64           `json:"createdAt"`
	UpdatedAt     int64           `json:"updatedAt"`
}

// OrdersResponse lists orders.
type OrdersResponse struct {
	Orders []Order `json:"orders"`
}

// CancelAllResponse counts cancelled orders.
type CancelAllResponse struct {
	CancelledCount int `json:"cancelledCount"`
}

// Fill is one execution; Liquidity is MAKER or TAKER.
type Fill struct {
	ID            string          `json:"id"`
	OrderID       string          `json:"orderId"`
	ClientOrderID string          `json:"clientOrderId,omitempty"`
	Market        string          `json:"market"`
	Side          string          `json:"side"`
	Size          decimal.Decimal `json:"size"`
	Price         decimal.Decimal `json:"price"`
	Fee           decimal.Decimal `json:"fee"`
	Liquidity     string          `json:"liquidity"`
	RealizedPnl   decimal.Decimal `json:"realizedPnl"`
	Timestamp     int64           `json:"timestamp"`
}

// FillsResponse lists fills newest first.
type FillsResponse struct {
	Fills []Fill `json:"fills"`
}

// CloseResponse reports a closed position; zeros when there was none.
type CloseResponse struct {
	Market        string          `json:"market"`
	ClosedSize    decimal.Decimal `json:"closedSize"`
	AvgClosePrice decimal.Decimal `json:"avgClosePrice"`
	OrderID       string          `json:"orderId,omitempty"`
}

// LeverageRequest sets a market's leverage.
type LeverageRequest struct {
	Leverage int `json:"leverage"`
}

// LeverageResponse is a market's leverage.
type LeverageResponse struct {
	Market   string `json:"market"`
	Leverage int    `json:"leverage"`
}

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail names an error's kind and says what to fix.
type ErrorDetail struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}
