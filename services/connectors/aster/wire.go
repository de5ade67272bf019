package aster

import (
	"encoding/json"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/shopspring/decimal"
)

// Aster's JSON, as fapi/v3 sends it (fact sheet §3, §4). Decimals arrive
// as strings; times are milliseconds. Ids, times and codes go through the
// shared lenient decoder: Aster sends them as strings in some answers and
// numbers in others (fact sheet §0 #9).

type exchangeInfo struct {
	RateLimits []rateLimit  `json:"rateLimits"`
	Symbols    []symbolInfo `json:"symbols"`
}

type rateLimit struct {
	RateLimitType string `json:"rateLimitType"`
	Interval      string `json:"interval"`
	IntervalNum   int    `json:"intervalNum"`
	Limit         int    `json:"limit"`
}

type symbolInfo struct {
	Symbol       string         `json:"symbol"`
	Pair         string         `json:"pair"`
	ContractType string         `json:"contractType"`
	Status       string         `json:"status"`
	BaseAsset    string         `json:"baseAsset"`
	QuoteAsset   string         `json:"quoteAsset"`
	MarginAsset  string         `json:"marginAsset"`
	Filters      []symbolFilter `json:"filters"`
}

type symbolFilter struct {
	FilterType string          `json:"filterType"`
	TickSize   decimal.Decimal `json:"tickSize"`
	MinPrice   decimal.Decimal `json:"minPrice"`
	MaxPrice   decimal.Decimal `json:"maxPrice"`
	StepSize   decimal.Decimal `json:"stepSize"`
	MinQty     decimal.Decimal `json:"minQty"`
	MaxQty     decimal.Decimal `json:"maxQty"`
	Notional   decimal.Decimal `json:"notional"`
}

type depth struct {
	LastUpdateID connector.Int        `json:"lastUpdateId"`
	T            connector.Int        `json:"T"` // transaction time, ms
	Bids         [][2]decimal.Decimal `json:"bids"`
	Asks         [][2]decimal.Decimal `json:"asks"`
}

type premiumIndex struct {
	Symbol          string          `json:"symbol"`
	MarkPrice       decimal.Decimal `json:"markPrice"`
	IndexPrice      decimal.Decimal `json:"indexPrice"`
	LastFundingRate decimal.Decimal `json:"lastFundingRate"`
	NextFundingTime connector.Int   `json:"nextFundingTime"`
	Time            connector.Int   `json:"time"`
}

// kline is one row of /fapi/v3/klines: [openTime, open, high, low, close,
// volume, closeTime, quoteVolume, trades, takerBase, takerQuote, ignore].
type kline []json.RawMessage

type commissionRate struct {
	Symbol              string          `json:"symbol"`
	MakerCommissionRate decimal.Decimal `json:"makerCommissionRate"`
	TakerCommissionRate decimal.Decimal `json:"takerCommissionRate"`
}

type account struct {
	TotalWalletBalance decimal.Decimal `json:"totalWalletBalance"`
	TotalMarginBalance decimal.Decimal `json:"totalMarginBalance"`
	AvailableBalance   decimal.Decimal `json:"availableBalance"`
}

type positionRisk struct {
	Symbol           string          `json:"symbol"`
	PositionSide     string          `json:"positionSide"`
	PositionAmt      decimal.Decimal `json:"positionAmt"`
	EntryPrice       decimal.Decimal `json:"entryPrice"`
	MarkPrice        decimal.Decimal `json:"markPrice"`
	UnRealizedProfit decimal.Decimal `json:"unRealizedProfit"`
	// Leverage is a string here, unlike Binance v3 (fact sheet §4).
	Leverage         connector.Decimal `json:"leverage"`
	LiquidationPrice connector.Decimal `json:"liquidationPrice"`
}

// order is an order, regular or conditional, as New Order, Query Order,
// Cancel Order and Current Open Orders return it.
type order struct {
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

type userTrade struct {
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

type leverageAnswer struct {
	Symbol   string        `json:"symbol"`
	Leverage connector.Int `json:"leverage"`
}

// batchItem is one order of POST /fapi/v3/batchOrders; Aster takes the
// values as strings (real JSON, not the docs' single-quoted example).
type batchItem struct {
	Symbol           string `json:"symbol"`
	Side             string `json:"side"`
	Type             string `json:"type"`
	Quantity         string `json:"quantity"`
	Price            string `json:"price"`
	TimeInForce      string `json:"timeInForce"`
	ReduceOnly       string `json:"reduceOnly,omitempty"`
	NewClientOrderID string `json:"newClientOrderId"`
}

// batchAnswer is one slot of the batch answer: an order, or {code,msg}.
type batchAnswer struct {
	order
	Code connector.Int `json:"code"`
	Msg  string        `json:"msg"`
}

// fundingInfo is one row of GET /fapi/v3/fundingInfo.
type fundingInfo struct {
	Symbol               string `json:"symbol"`
	FundingIntervalHours int    `json:"fundingIntervalHours"`
}
