package contract

import "github.com/shopspring/decimal"

// Parameter structs. The `op` tag carries validation rules that the edge
// enforces and that JSON Schemas are generated from:
//
//	required        the field must be present
//	enum=A|B        one of the listed values
//	min=N, max=N    integer bounds; for slices, length bounds
//	positive        a decimal greater than zero
//	number          a decimal that may also be sent as a JSON number
//	maxlen=N        string length bound
//	default=V       value used when the field is absent
//	market          a market symbol (parsed by pkg/symbol)
//	clientid        a client order id: 1-36 chars of [A-Za-z0-9_-]
//
// The `desc` tag documents the field for humans and agents.

// Side is an order side.
type Side string

// Order sides.
const (
	Buy  Side = "BUY"
	Sell Side = "SELL"
)

// PositionSide is the side of a position.
type PositionSide string

// Position sides.
const (
	Long  PositionSide = "LONG"
	Short PositionSide = "SHORT"
)

// NoParams is the parameter struct of operations that take only credentialId.
type NoParams struct{}

// MarketParams is the parameter struct of operations that take only a market.
type MarketParams struct {
	Market string `json:"market" op:"required,market" desc:"Market symbol, e.g. BTC-USD-PERP, BTC or BTCUSDT."`
}

// MarketFilterParams filters a listing by market.
type MarketFilterParams struct {
	Market string `json:"market,omitempty" op:"market" desc:"Only this market; all markets when absent."`
}

// OrderbookParams are getOrderbook's parameters.
type OrderbookParams struct {
	Market string `json:"market" op:"required,market" desc:"Market symbol."`
	Depth  int    `json:"depth" op:"min=1,max=1000,default=20" desc:"Levels per side."`
}

// CandlesParams are getCandles' parameters.
type CandlesParams struct {
	Market   string `json:"market" op:"required,market" desc:"Market symbol."`
	Interval string `json:"interval" op:"enum=1|5|15|60|240|1440,default=60" desc:"Candle length in minutes, as a string."`
	Limit    int    `json:"limit" op:"min=1,max=500,default=100" desc:"Number of candles, newest last."`
}

// FillsParams are getFills' parameters.
type FillsParams struct {
	Market string `json:"market" op:"required,market" desc:"Market symbol."`
	Limit  int    `json:"limit" op:"min=1,max=1000,default=100" desc:"Number of fills, newest first."`
}

// LimitOrderParams are placeLimitOrder's parameters.
type LimitOrderParams struct {
	Market        string           `json:"market" op:"required,market" desc:"Market symbol."`
	Side          Side             `json:"side" op:"required,enum=BUY|SELL" desc:"BUY or SELL."`
	Size          decimal.Decimal  `json:"size" op:"required,positive" desc:"Order size in base-asset units, as a decimal string."`
	Price         decimal.Decimal  `json:"price" op:"required,positive" desc:"Limit price in quote currency, as a decimal string."`
	PostOnly      bool             `json:"postOnly" op:"default=false" desc:"Reject instead of taking liquidity."`
	ReduceOnly    bool             `json:"reduceOnly" op:"default=false" desc:"Only reduce an open position."`
	ClientOrderID string           `json:"clientOrderId,omitempty" op:"clientid" desc:"Your id for deduplication: a repeat within 24 h returns the first result."`
	TakeProfit    *AttachedTrigger `json:"takeProfit,omitempty" desc:"Take-profit to protect what the entry fills: a reduce-only market order on the opposite side at this mark price, resized as the entry fills."`
	StopLoss      *AttachedTrigger `json:"stopLoss,omitempty" desc:"Stop-loss to protect what the entry fills: a reduce-only market order on the opposite side at this mark price, resized as the entry fills."`
	DryRun        bool             `json:"dryRun,omitempty" op:"default=false" desc:"Validate, round and check guards, send nothing: the answer shows what would be sent."`
}

// MarketOrderParams are placeMarketOrder's parameters.
type MarketOrderParams struct {
	Market        string           `json:"market" op:"required,market" desc:"Market symbol."`
	Side          Side             `json:"side" op:"required,enum=BUY|SELL" desc:"BUY or SELL."`
	Size          decimal.Decimal  `json:"size" op:"required,positive" desc:"Order size in base-asset units, as a decimal string."`
	ReduceOnly    bool             `json:"reduceOnly" op:"default=false" desc:"Only reduce an open position."`
	ClientOrderID string           `json:"clientOrderId,omitempty" op:"clientid" desc:"Your id for deduplication: a repeat within 24 h returns the first result."`
	TakeProfit    *AttachedTrigger `json:"takeProfit,omitempty" desc:"Take-profit to protect what the entry fills: a reduce-only market order on the opposite side at this mark price, resized as the entry fills."`
	StopLoss      *AttachedTrigger `json:"stopLoss,omitempty" desc:"Stop-loss to protect what the entry fills: a reduce-only market order on the opposite side at this mark price, resized as the entry fills."`
	DryRun        bool             `json:"dryRun,omitempty" op:"default=false" desc:"Validate, round and check guards, send nothing: the answer shows what would be sent."`
}

// AttachedTrigger is the take-profit or stop-loss of an entry order.
type AttachedTrigger struct {
	TriggerPrice decimal.Decimal `json:"triggerPrice" op:"required,positive" desc:"Mark price that triggers the leg, in quote currency, as a decimal string."`
}

// attached returns the entry's take-profit and stop-loss triggers, nil
// when not given.
func attached(tp, sl *AttachedTrigger) (t, s *decimal.Decimal) {
	if tp != nil {
		t = &tp.TriggerPrice
	}
	if sl != nil {
		s = &sl.TriggerPrice
	}
	return t, s
}

// Attached returns the take-profit and stop-loss triggers, nil when absent.
func (p *LimitOrderParams) Attached() (tp, sl *decimal.Decimal) {
	return attached(p.TakeProfit, p.StopLoss)
}

// Attached returns the take-profit and stop-loss triggers, nil when absent.
func (p *MarketOrderParams) Attached() (tp, sl *decimal.Decimal) {
	return attached(p.TakeProfit, p.StopLoss)
}

// Validate refuses protection on a reduce-only entry: it opens nothing to protect.
func (p *LimitOrderParams) Validate() *Error {
	return attachReduceOnly(p.ReduceOnly, p.TakeProfit, p.StopLoss)
}

// Validate refuses protection on a reduce-only entry: it opens nothing to protect.
func (p *MarketOrderParams) Validate() *Error {
	return attachReduceOnly(p.ReduceOnly, p.TakeProfit, p.StopLoss)
}

func attachReduceOnly(reduceOnly bool, tp, sl *AttachedTrigger) *Error {
	if reduceOnly && (tp != nil || sl != nil) {
		return invalid("takeProfit and stopLoss protect the position an entry opens: drop them or reduceOnly")
	}
	return nil
}

// StopOrderParams are placeStopOrder's parameters.
type StopOrderParams struct {
	Market        string          `json:"market" op:"required,market" desc:"Market symbol."`
	Side          Side            `json:"side" op:"required,enum=BUY|SELL" desc:"BUY or SELL."`
	Size          decimal.Decimal `json:"size" op:"required,positive" desc:"Order size in base-asset units, as a decimal string."`
	TriggerPrice  decimal.Decimal `json:"triggerPrice" op:"required,positive" desc:"Mark price that triggers a market order."`
	ReduceOnly    bool            `json:"reduceOnly" op:"default=true" desc:"Only reduce an open position (default true)."`
	ClientOrderID string          `json:"clientOrderId,omitempty" op:"clientid" desc:"Your id for deduplication: a repeat within 24 h returns the first result."`
	DryRun        bool            `json:"dryRun,omitempty" op:"default=false" desc:"Validate, round and check guards, send nothing: the answer shows what would be sent."`
}

// BatchOrder is one order of placeBatchOrder.
type BatchOrder struct {
	Market        string          `json:"market" op:"required,market" desc:"Market symbol."`
	Side          Side            `json:"side" op:"required,enum=BUY|SELL" desc:"BUY or SELL."`
	Size          decimal.Decimal `json:"size" op:"required,positive" desc:"Order size in base-asset units, as a decimal string."`
	Price         decimal.Decimal `json:"price" op:"required,positive" desc:"Limit price, as a decimal string."`
	OrderType     string          `json:"orderType" op:"enum=LIMIT,default=LIMIT" desc:"Only LIMIT."`
	PostOnly      bool            `json:"postOnly" op:"default=false" desc:"Reject instead of taking liquidity."`
	ReduceOnly    bool            `json:"reduceOnly" op:"default=false" desc:"Only reduce an open position."`
	ClientOrderID string          `json:"clientOrderId,omitempty" op:"clientid" desc:"Your id for deduplication."`
}

// BatchOrderParams are placeBatchOrder's parameters.
type BatchOrderParams struct {
	Orders []BatchOrder `json:"orders" op:"required,min=1,max=10" desc:"1 to 10 limit orders."`
	DryRun bool         `json:"dryRun,omitempty" op:"default=false" desc:"Validate, round and check guards for every order, send nothing."`
}

// ProtectionParams are placeProtectionOrders' parameters.
type ProtectionParams struct {
	Market        string          `json:"market" op:"required,market" desc:"Market symbol."`
	Side          PositionSide    `json:"side" op:"required,enum=LONG|SHORT" desc:"Side of the position to protect: LONG or SHORT."`
	Size          decimal.Decimal `json:"size" op:"required,positive" desc:"Position size in base-asset units."`
	EntryPrice    decimal.Decimal `json:"entryPrice" op:"required,positive" desc:"Entry price the percentages are taken from."`
	TPPercent     decimal.Decimal `json:"tpPercent" op:"number,positive" desc:"Take-profit distance from entry in percent (5 means 5%)."`
	SLPercent     decimal.Decimal `json:"slPercent" op:"number,positive" desc:"Stop-loss distance from entry in percent (below 100 for longs)."`
	ClientOrderID string          `json:"clientOrderId,omitempty" op:"clientid" desc:"Your id for deduplication; -tp and -sl are derived from it."`
	DryRun        bool            `json:"dryRun,omitempty" op:"default=false" desc:"Validate, round and check guards, send nothing: the answer shows what would be sent."`
}

// CancelOrderParams are cancelOrder's parameters.
type CancelOrderParams struct {
	OrderID string `json:"orderId" op:"required,maxlen=128" desc:"Exchange order id from the placement response."`
	Market  string `json:"market,omitempty" op:"market" desc:"Market symbol; required by some exchanges."`
}

// LeverageParams are setLeverage's parameters.
type LeverageParams struct {
	Market   string `json:"market" op:"required,market" desc:"Market symbol."`
	Leverage int    `json:"leverage" op:"required,min=1,max=200" desc:"Cross-margin leverage multiplier."`
}

// ModifyOrderParams are modifyOrder's parameters (an extension operation).
type ModifyOrderParams struct {
	OrderID       string          `json:"orderId,omitempty" op:"maxlen=128" desc:"Exchange order id; give this or clientOrderId."`
	ClientOrderID string          `json:"clientOrderId,omitempty" op:"clientid" desc:"The clientOrderId the order was placed with; give this or orderId."`
	Market        string          `json:"market" op:"required,market" desc:"Market symbol of the order."`
	Price         decimal.Decimal `json:"price,omitzero" op:"positive" desc:"New limit price in quote currency (limit orders); unchanged when absent."`
	Size          decimal.Decimal `json:"size,omitzero" op:"positive" desc:"New total size in base-asset units, filled part included; unchanged when absent."`
	TriggerPrice  decimal.Decimal `json:"triggerPrice,omitzero" op:"positive" desc:"New trigger price (stop orders); unchanged when absent."`
	DryRun        bool            `json:"dryRun,omitempty" op:"default=false" desc:"Validate, round and check guards, send nothing: the answer shows the order as it would be after the change."`
}

// Validate asks for exactly one order reference and at least one change.
func (p *ModifyOrderParams) Validate() *Error {
	if (p.OrderID == "") == (p.ClientOrderID == "") {
		return invalid("give exactly one of orderId and clientOrderId")
	}
	if p.Price.IsZero() && p.Size.IsZero() && p.TriggerPrice.IsZero() {
		return invalid("give at least one of price, size and triggerPrice to change")
	}
	return nil
}

// DeadManSwitchParams are setDeadManSwitch's parameters (an extension
// operation).
type DeadManSwitchParams struct {
	TimeoutSeconds int    `json:"timeoutSeconds" op:"required,min=0,max=3600" desc:"Seconds (5-3600) until every open order is cancelled unless the switch is set again; 0 turns it off."`
	Market         string `json:"market,omitempty" op:"market" desc:"Only this market's orders; every market of the credential when absent."`
}

// Validate refuses timeouts between 0 and the shortest switch.
func (p *DeadManSwitchParams) Validate() *Error {
	if p.TimeoutSeconds != 0 && p.TimeoutSeconds < MinDeadManSeconds {
		return invalid("field \"timeoutSeconds\" must be 0 (off) or %d to 3600, got %d", MinDeadManSeconds, p.TimeoutSeconds)
	}
	return nil
}

// MinDeadManSeconds is the shortest dead man's switch timeout.
const MinDeadManSeconds = 5
