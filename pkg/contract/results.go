package contract

import "github.com/shopspring/decimal"

// Result structs: the operation-specific fields of a success response
// (the edge adds success:true). Decimals marshal as plain strings with
// trailing zeros trimmed; times are Unix seconds.

// Level is one order-book level: [price, size].
type Level [2]decimal.Decimal

// OrderbookResult is getOrderbook's result.
type OrderbookResult struct {
	Bids []Level `json:"bids"`
	Asks []Level `json:"asks"`
	// AsOf (Unix ms) is when the data was last known current: the venue's
	// timestamp or the receipt of its answer, or for a healthy stream its
	// last message or heartbeat (DESIGN §12). Zero (omitted) when unknown.
	AsOf int64 `json:"asOf,omitempty"`
}

// MarkPriceResult is getMarkPrice's result.
type MarkPriceResult struct {
	MarkPrice  decimal.Decimal `json:"markPrice"`
	IndexPrice decimal.Decimal `json:"indexPrice"`
	AsOf       int64           `json:"asOf,omitempty"` // Unix ms, as OrderbookResult.AsOf
}

// Candle is one OHLCV candle.
type Candle struct {
	Time   int64           `json:"time"`
	Open   decimal.Decimal `json:"open"`
	High   decimal.Decimal `json:"high"`
	Low    decimal.Decimal `json:"low"`
	Close  decimal.Decimal `json:"close"`
	Volume decimal.Decimal `json:"volume"`
}

// CandlesResult is getCandles' result.
type CandlesResult struct {
	Candles []Candle `json:"candles"`
}

// FundingRateResult is getFundingRate's result.
type FundingRateResult struct {
	FundingRate     decimal.Decimal `json:"fundingRate"`
	NextFundingTime int64           `json:"nextFundingTime"`
	// FundingIntervalHours is how many hours FundingRate covers (8 on most
	// CEX markets, 1 on Hyperliquid); FundingRateHourly is FundingRate
	// spread over them, so venues compare (DESIGN §12).
	FundingIntervalHours int             `json:"fundingIntervalHours"`
	FundingRateHourly    decimal.Decimal `json:"fundingRateHourly"`
	AsOf                 int64           `json:"asOf,omitempty"` // Unix ms, as OrderbookResult.AsOf
}

// Hourly fills FundingRateHourly from the rate and its interval.
func (r *FundingRateResult) Hourly() {
	r.FundingRateHourly = hourly(r.FundingRate, r.FundingIntervalHours)
}

func hourly(rate decimal.Decimal, hours int) decimal.Decimal {
	if hours <= 0 {
		return rate
	}
	return rate.DivRound(decimal.NewFromInt(int64(hours)), 12)
}

// MarketEntry is one market of getMarketsWithFunding.
type MarketEntry struct {
	Symbol      string          `json:"symbol"`
	MarkPrice   decimal.Decimal `json:"markPrice"`
	FundingRate decimal.Decimal `json:"fundingRate"`
	// OpenInterest is left out where the venue publishes none (DESIGN §13).
	OpenInterest         *decimal.Decimal `json:"openInterest,omitempty"`
	FundingIntervalHours int              `json:"fundingIntervalHours"`
	FundingRateHourly    decimal.Decimal  `json:"fundingRateHourly"`
}

// Hourly fills FundingRateHourly from the rate and its interval.
func (e *MarketEntry) Hourly() {
	e.FundingRateHourly = hourly(e.FundingRate, e.FundingIntervalHours)
}

// MarketsResult is getMarketsWithFunding's result.
// AsOf covers the whole list (one venue answer, or the oldest stream data
// it was built from), so it sits beside the entries, not in each.
type MarketsResult struct {
	Markets []MarketEntry `json:"markets"`
	AsOf    int64         `json:"asOf,omitempty"` // Unix ms, as OrderbookResult.AsOf
}

// FeeInfoResult is getFeeInfo's result, in basis points.
type FeeInfoResult struct {
	MakerFee decimal.Decimal `json:"makerFee"`
	TakerFee decimal.Decimal `json:"takerFee"`
}

// BalanceResult is getBalance's result.
type BalanceResult struct {
	ExchangeType   Exchange        `json:"exchange_type"`
	Equity         decimal.Decimal `json:"equity"`
	FreeCollateral decimal.Decimal `json:"freeCollateral"`
	AccountValue   decimal.Decimal `json:"accountValue"`
}

// Position is one open position.
type Position struct {
	Market        string          `json:"market"`
	Side          PositionSide    `json:"side"`
	Size          decimal.Decimal `json:"size"`
	EntryPrice    decimal.Decimal `json:"entryPrice"`
	MarkPrice     decimal.Decimal `json:"markPrice"`
	UnrealizedPnl decimal.Decimal `json:"unrealizedPnl"`
	Leverage      decimal.Decimal `json:"leverage,omitzero"` // left out when the venue gives none and it cannot be derived
}

// PositionsResult is getPositions' result.
type PositionsResult struct {
	Positions []Position `json:"positions"`
}

// Order statuses (SPEC §3 names OPEN and PENDING; the rest complete the set).
const (
	StatusOpen      = "OPEN"
	StatusPending   = "PENDING"
	StatusFilled    = "FILLED"
	StatusCancelled = "CANCELLED"
	StatusRejected  = "REJECTED"
	// StatusUnknown: the venue may or may not have the order and
	// reconciliation could not tell (DESIGN §12); never reported as REJECTED.
	StatusUnknown = "UNKNOWN"
)

// Order is one open or pending order.
type Order struct {
	ID            string           `json:"id"`
	Market        string           `json:"market"`
	Side          Side             `json:"side"`
	Type          string           `json:"type"`
	Size          decimal.Decimal  `json:"size"`
	Price         decimal.Decimal  `json:"price"`
	FilledSize    decimal.Decimal  `json:"filledSize"`
	Status        string           `json:"status"`
	CreatedAt     int64            `json:"createdAt"`
	TriggerPrice  *decimal.Decimal `json:"triggerPrice,omitempty"`
	ReduceOnly    bool             `json:"reduceOnly"`
	ClientOrderID string           `json:"clientOrderId,omitempty"`
}

// OrdersResult is getOrders' result.
type OrdersResult struct {
	Orders []Order `json:"orders"`
}

// Fill is one execution.
type Fill struct {
	ID        string          `json:"id"`
	OrderID   string          `json:"orderId,omitempty"`
	Market    string          `json:"market"`
	Side      Side            `json:"side"`
	Size      decimal.Decimal `json:"size"`
	Price     decimal.Decimal `json:"price"`
	Fee       decimal.Decimal `json:"fee"`
	Timestamp int64           `json:"timestamp"`
	// RealizedPnl is the profit or loss this fill closed, before fees, in
	// quote currency; nil (absent) where the venue does not say.
	RealizedPnl *decimal.Decimal `json:"realizedPnl,omitempty"`
}

// FillsResult is getFills' result.
type FillsResult struct {
	Fills []Fill `json:"fills"`
}

// TestCredentialsResult is testCredentials' result.
type TestCredentialsResult struct {
	Valid    bool              `json:"valid"`
	Exchange Exchange          `json:"exchange"`
	Reason   *CredentialReason `json:"reason,omitempty"` // with valid:false
}

// CredentialReason says why a credential is not valid: the venue's code
// and message (or the gateway's, for a secret it cannot use), never the
// secret.
type CredentialReason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// LimitOrderResult is placeLimitOrder's result.
type LimitOrderResult struct {
	OrderID       string          `json:"orderId"`
	Market        string          `json:"market"`
	Side          Side            `json:"side"`
	Size          decimal.Decimal `json:"size"`
	Price         decimal.Decimal `json:"price"`
	Status        string          `json:"status"`
	ClientOrderID string          `json:"clientOrderId"`
	// Protection: the takeProfit/stopLoss given with the entry.
	Protection *AttachedProtection `json:"protection,omitempty"`
}

// AttachedProtection is the take-profit/stop-loss pair an entry was placed
// with: how it is attached (getCapabilities attachedProtection) and, once
// placed, the pair protecting what has filled. The pair is resized as the
// entry fills, so later pairs are read with getOrders.
type AttachedProtection struct {
	Mode       Support          `json:"mode"`
	TakeProfit *decimal.Decimal `json:"takeProfit,omitempty"`
	StopLoss   *decimal.Decimal `json:"stopLoss,omitempty"`
	Size       *decimal.Decimal `json:"size,omitempty"` // what the pair covers, once placed
	TPOrderID  string           `json:"tpOrderId,omitempty"`
	SLOrderID  string           `json:"slOrderId,omitempty"`
}

// MarketOrderResult is placeMarketOrder's result.
type MarketOrderResult struct {
	OrderID       string          `json:"orderId"`
	Market        string          `json:"market"`
	Side          Side            `json:"side"`
	FilledPrice   decimal.Decimal `json:"filledPrice"`
	FilledSize    decimal.Decimal `json:"filledSize"`
	Fee           decimal.Decimal `json:"fee"`
	ClientOrderID string          `json:"clientOrderId"`
	// Protection: the takeProfit/stopLoss given with the entry.
	Protection *AttachedProtection `json:"protection,omitempty"`
}

// StopOrderResult is placeStopOrder's result.
type StopOrderResult struct {
	OrderID       string          `json:"orderId"`
	Status        string          `json:"status"`
	TriggerPrice  decimal.Decimal `json:"triggerPrice"`
	ClientOrderID string          `json:"clientOrderId"`
}

// BatchOrderResult is the outcome of one order of a batch. A rejected order
// has status REJECTED and carries its error; the others still stand.
type BatchOrderResult struct {
	OrderID       string `json:"orderId"`
	Status        string `json:"status"`
	ClientOrderID string `json:"clientOrderId"`
	Error         *Error `json:"error,omitempty"`
}

// BatchResult is placeBatchOrder's result, in request order.
type BatchResult struct {
	Results []BatchOrderResult `json:"results"`
}

// ProtectionResult is placeProtectionOrders' result; an id is empty when
// that leg was not requested.
type ProtectionResult struct {
	TPOrderID string `json:"tpOrderId"`
	SLOrderID string `json:"slOrderId"`
}

// CancelOrderResult is cancelOrder's result: success only.
type CancelOrderResult struct{}

// CancelAllResult is cancelAllOrders' result.
type CancelAllResult struct {
	CancelledCount int `json:"cancelledCount"`
}

// CloseAllResult is closeAllPositions' result.
type CloseAllResult struct {
	ClosedSize    decimal.Decimal `json:"closedSize"`
	AvgClosePrice decimal.Decimal `json:"avgClosePrice"`
}

// LeverageResult is setLeverage's result.
type LeverageResult struct {
	Leverage int `json:"leverage"`
}

// DryRunOrder is what a placement with dryRun would send for one order:
// rounded size and price, and the notional the guards judged (at the
// highest price the order can trade at, DESIGN §13). Price is the limit
// price, or for market and stop orders the price the notional was taken at.
type DryRunOrder struct {
	Market        string           `json:"market"`
	VenueSymbol   string           `json:"venueSymbol"`
	Type          string           `json:"type"`
	Side          Side             `json:"side"`
	Size          decimal.Decimal  `json:"size"`
	Price         decimal.Decimal  `json:"price"`
	TriggerPrice  *decimal.Decimal `json:"triggerPrice,omitempty"`
	Notional      decimal.Decimal  `json:"notional"`
	PostOnly      bool             `json:"postOnly"`
	ReduceOnly    bool             `json:"reduceOnly"`
	ClientOrderID string           `json:"clientOrderId"`
}

// DryRunResult answers a single placement with dryRun: true.
type DryRunResult struct {
	DryRun bool `json:"dryRun"`
	DryRunOrder
	// The pair an entry with takeProfit/stopLoss would place once it
	// fills, sized to the whole entry.
	TakeProfit *DryRunOrder `json:"takeProfit,omitempty"`
	StopLoss   *DryRunOrder `json:"stopLoss,omitempty"`
}

// DryRunBatchEntry is one order of a batch dry run: status DRY_RUN with
// the order, or REJECTED with the error a real batch would give it.
type DryRunBatchEntry struct {
	Status string `json:"status"`
	*DryRunOrder
	ClientOrderID string `json:"clientOrderId"`
	Error         *Error `json:"error,omitempty"`
}

// DryRunBatchResult answers placeBatchOrder with dryRun: true, in request order.
type DryRunBatchResult struct {
	DryRun  bool               `json:"dryRun"`
	Results []DryRunBatchEntry `json:"results"`
}

// DryRunProtectionResult answers placeProtectionOrders with dryRun: true.
type DryRunProtectionResult struct {
	DryRun     bool         `json:"dryRun"`
	TakeProfit *DryRunOrder `json:"takeProfit,omitempty"`
	StopLoss   *DryRunOrder `json:"stopLoss,omitempty"`
}

// StatusDryRun marks a batch entry that a dry run would have sent.
const StatusDryRun = "DRY_RUN"

// Dead man's switch modes: the venue's own switch, or the gateway's timer.
const (
	DeadManNative   = "native"
	DeadManEmulated = "emulated"
)

// DeadManSwitchResult is setDeadManSwitch's result (an extension operation).
type DeadManSwitchResult struct {
	Mode     string `json:"mode" desc:"native (the exchange's own switch) or emulated (a timer kept by the gateway)."`
	Deadline int64  `json:"deadline" desc:"When the orders are cancelled unless the switch is set again, Unix seconds; 0 when off."`
}
