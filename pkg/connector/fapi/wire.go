// Package fapi holds what venues with Binance USDⓈ-M Futures' REST shapes
// (Binance's fapi, and Aster's fapi/v3, which copies it) share: the JSON
// of their answers and its conversion to connector and contract types,
// and the operations written once on them: the REST client and its answer
// loop (Client, Host.Do), market data (MarketData), orders, cancels,
// amends and the dead man's switch (Placer), account reads (Reads), the
// position-mode cache (Modes), the market streams (DialStream) and the
// listen-key user data stream and its events (UserStream, Events). Each
// connector keeps its own signing, endpoints, error table and quirks.
package fapi

import (
	"encoding/json"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/shopspring/decimal"
)

// The answers, as fapi sends them. Decimals arrive as strings; times are
// milliseconds. Ids and times go through the shared lenient decoder: Aster
// sends them as strings in some answers and numbers in others.

// ExchangeInfo is GET exchangeInfo.
type ExchangeInfo struct {
	RateLimits []RateLimit  `json:"rateLimits"`
	Symbols    []SymbolInfo `json:"symbols"`
}

// RateLimit is one of exchangeInfo's rate limits.
type RateLimit struct {
	RateLimitType string `json:"rateLimitType"`
	Interval      string `json:"interval"`
	IntervalNum   int    `json:"intervalNum"`
	Limit         int    `json:"limit"`
}

// SymbolInfo is one of exchangeInfo's symbols.
type SymbolInfo struct {
	Symbol       string         `json:"symbol"`
	Pair         string         `json:"pair"`
	ContractType string         `json:"contractType"`
	Status       string         `json:"status"`
	BaseAsset    string         `json:"baseAsset"`
	QuoteAsset   string         `json:"quoteAsset"`
	MarginAsset  string         `json:"marginAsset"`
	Filters      []SymbolFilter `json:"filters"`
}

// SymbolFilter is one filter of a symbol (PRICE_FILTER, LOT_SIZE, ...).
type SymbolFilter struct {
	FilterType string          `json:"filterType"`
	TickSize   decimal.Decimal `json:"tickSize"`
	MinPrice   decimal.Decimal `json:"minPrice"`
	MaxPrice   decimal.Decimal `json:"maxPrice"`
	StepSize   decimal.Decimal `json:"stepSize"`
	MinQty     decimal.Decimal `json:"minQty"`
	MaxQty     decimal.Decimal `json:"maxQty"`
	Notional   decimal.Decimal `json:"notional"`
}

// Depth is an order book answer.
type Depth struct {
	LastUpdateID connector.Int        `json:"lastUpdateId"`
	T            connector.Int        `json:"T"` // transaction time, ms
	Bids         [][2]decimal.Decimal `json:"bids"`
	Asks         [][2]decimal.Decimal `json:"asks"`
}

// PremiumIndex is a symbol's mark price and funding.
type PremiumIndex struct {
	Symbol          string          `json:"symbol"`
	MarkPrice       decimal.Decimal `json:"markPrice"`
	IndexPrice      decimal.Decimal `json:"indexPrice"`
	LastFundingRate decimal.Decimal `json:"lastFundingRate"`
	NextFundingTime connector.Int   `json:"nextFundingTime"`
	Time            connector.Int   `json:"time"`
}

// Kline is one row of klines: [openTime, open, high, low, close, volume,
// closeTime, quoteVolume, trades, takerBase, takerQuote, ignore].
type Kline []json.RawMessage

// CommissionRate is the account's fee rates on a symbol.
type CommissionRate struct {
	Symbol              string          `json:"symbol"`
	MakerCommissionRate decimal.Decimal `json:"makerCommissionRate"`
	TakerCommissionRate decimal.Decimal `json:"takerCommissionRate"`
}

// Account holds the account totals.
type Account struct {
	TotalWalletBalance decimal.Decimal `json:"totalWalletBalance"`
	TotalMarginBalance decimal.Decimal `json:"totalMarginBalance"`
	AvailableBalance   decimal.Decimal `json:"availableBalance"`
}

// PositionRisk is one row of positionRisk.
type PositionRisk struct {
	Symbol           string          `json:"symbol"`
	PositionSide     string          `json:"positionSide"`
	PositionAmt      decimal.Decimal `json:"positionAmt"`
	EntryPrice       decimal.Decimal `json:"entryPrice"`
	MarkPrice        decimal.Decimal `json:"markPrice"`
	UnRealizedProfit decimal.Decimal `json:"unRealizedProfit"`
	// Leverage is there on Aster (a string), not on Binance's v3.
	Leverage connector.Decimal `json:"leverage"`
}

// Order is an order as New Order, Query Order, Cancel Order and Current
// Open Orders return it.
type Order struct {
	OrderID       connector.Int   `json:"orderId"`
	Symbol        string          `json:"symbol"`
	Status        string          `json:"status"`
	ClientOrderID string          `json:"clientOrderId"`
	Price         decimal.Decimal `json:"price"`
	AvgPrice      decimal.Decimal `json:"avgPrice"`
	OrigQty       decimal.Decimal `json:"origQty"`
	ExecutedQty   decimal.Decimal `json:"executedQty"`
	CumQuote      decimal.Decimal `json:"cumQuote"`
	TimeInForce   string          `json:"timeInForce"`
	Type          string          `json:"type"`
	Side          string          `json:"side"`
	ReduceOnly    bool            `json:"reduceOnly"`
	StopPrice     decimal.Decimal `json:"stopPrice"`
	Time          connector.Int   `json:"time"`
	UpdateTime    connector.Int   `json:"updateTime"`
}

// UserTrade is one row of userTrades.
type UserTrade struct {
	ID         connector.Int   `json:"id"`
	OrderID    connector.Int   `json:"orderId"`
	Symbol     string          `json:"symbol"`
	Side       string          `json:"side"`
	Price      decimal.Decimal `json:"price"`
	Qty        decimal.Decimal `json:"qty"`
	Commission decimal.Decimal `json:"commission"`
	Time       connector.Int   `json:"time"`
	// RealizedPnl is what the trade closed, before fees; Given false when absent.
	RealizedPnl connector.Decimal `json:"realizedPnl"`
}

// BatchItem is one order of POST batchOrders; the values go as strings.
type BatchItem struct {
	Symbol           string `json:"symbol"`
	Side             string `json:"side"`
	Type             string `json:"type"`
	Quantity         string `json:"quantity"`
	Price            string `json:"price"`
	TimeInForce      string `json:"timeInForce"`
	ReduceOnly       string `json:"reduceOnly,omitempty"`
	NewClientOrderID string `json:"newClientOrderId"`
}

// FundingInfo is one row of GET fundingInfo.
type FundingInfo struct {
	Symbol               string `json:"symbol"`
	FundingIntervalHours int    `json:"fundingIntervalHours"`
}
