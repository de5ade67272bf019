package binance

import (
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/shopspring/decimal"
)

// Binance's own JSON beyond fapi's shapes (fact sheet §3, §4). Decimals
// arrive as strings; times are milliseconds.

type openInterest struct {
	Symbol       string          `json:"symbol"`
	OpenInterest decimal.Decimal `json:"openInterest"`
	Time         connector.Int   `json:"time"`
}

type accountConfig struct {
	CanTrade          bool `json:"canTrade"`
	DualSidePosition  bool `json:"dualSidePosition"`
	MultiAssetsMargin bool `json:"multiAssetsMargin"`
}

type symbolConfig struct {
	Symbol     string `json:"symbol"`
	MarginType string `json:"marginType"`
	Leverage   int    `json:"leverage"`
}

// algoOrder is a conditional order of the algo service (fact sheet §0).
type algoOrder struct {
	AlgoID       connector.Int   `json:"algoId"`
	ClientAlgoID string          `json:"clientAlgoId"`
	AlgoType     string          `json:"algoType"`
	OrderType    string          `json:"orderType"`
	Symbol       string          `json:"symbol"`
	Side         string          `json:"side"`
	Quantity     decimal.Decimal `json:"quantity"`
	AlgoStatus   string          `json:"algoStatus"`
	TriggerPrice decimal.Decimal `json:"triggerPrice"`
	Price        decimal.Decimal `json:"price"`
	WorkingType  string          `json:"workingType"`
	ReduceOnly   bool            `json:"reduceOnly"`
	CreateTime   connector.Int   `json:"createTime"`
}
