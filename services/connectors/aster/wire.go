package aster

import "github.com/perpgate/perpgate/pkg/connector/fapi"

// Aster's JSON, as fapi/v3 sends it (fact sheet §3, §4): Binance USDⓈ-M's
// shapes (package fapi). Ids, times and codes go through the shared
// lenient decoder: Aster sends them as strings in some answers and
// numbers in others (fact sheet §0 #9).
type (
	exchangeInfo = fapi.ExchangeInfo
	premiumIndex = fapi.PremiumIndex
	kline        = fapi.Kline
	positionRisk = fapi.PositionRisk
	order        = fapi.Order
	userTrade    = fapi.UserTrade
	batchItem    = fapi.BatchItem
	fundingInfo  = fapi.FundingInfo
	symbolMeta   = fapi.SymbolMeta
)
