package paper

import (
	"time"

	"github.com/shopspring/decimal"
)

// Side is an order or fill side: "BUY" or "SELL".
type Side string

// Order sides.
const (
	Buy  Side = "BUY"
	Sell Side = "SELL"
)

// PositionSide is "LONG" or "SHORT".
type PositionSide string

// Position sides.
const (
	Long  PositionSide = "LONG"
	Short PositionSide = "SHORT"
)

// OrderType is the kind of an order.
type OrderType string

// Order types.
const (
	Limit            OrderType = "LIMIT"
	Market           OrderType = "MARKET"
	StopMarket       OrderType = "STOP_MARKET"
	TakeProfitMarket OrderType = "TAKE_PROFIT_MARKET"
)

// OrderStatus is an order's state.
type OrderStatus string

// Order states. OPEN and PENDING are live; the others are final.
const (
	Open      OrderStatus = "OPEN"
	Pending   OrderStatus = "PENDING"
	Filled    OrderStatus = "FILLED"
	Cancelled OrderStatus = "CANCELLED"
	Rejected  OrderStatus = "REJECTED"
)

// Liquidity says whether a fill added (MAKER) or took (TAKER) liquidity.
type Liquidity string

// Liquidity values.
const (
	Maker Liquidity = "MAKER"
	Taker Liquidity = "TAKER"
)

// OrderRequest asks for a new order. Size must be a positive multiple of the
// market's lot size; Price (LIMIT) and TriggerPrice (STOP_MARKET,
// TAKE_PROFIT_MARKET) positive multiples of its tick size.
type OrderRequest struct {
	Market        string
	Side          Side
	Type          OrderType
	Size          decimal.Decimal
	Price         decimal.Decimal
	TriggerPrice  decimal.Decimal
	PostOnly      bool
	ReduceOnly    bool
	ClientOrderID string
	// PositionLinked ties a reduce-only trigger order to the position it
	// protects: it is cancelled when that position closes, as venues treat
	// position TP/SL (so a fired take-profit takes its stop-loss with it).
	PositionLinked bool
}

// Order is a snapshot of an order.
type Order struct {
	ID             string
	ClientOrderID  string
	Market         string
	Side           Side
	Type           OrderType
	Size           decimal.Decimal // after any reduce-only cap
	Price          decimal.Decimal // zero for market and stop orders
	TriggerPrice   decimal.Decimal // zero unless a stop or take-profit
	FilledSize     decimal.Decimal
	AvgFillPrice   decimal.Decimal // zero until something filled
	Fee            decimal.Decimal // fees paid so far
	PostOnly       bool
	ReduceOnly     bool
	PositionLinked bool
	Status         OrderStatus
	Reason         string // why it was cancelled or rejected, when not by the owner
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Fill is one execution of an order.
type Fill struct {
	ID            string
	OrderID       string
	ClientOrderID string
	Market        string
	Side          Side
	Size          decimal.Decimal
	Price         decimal.Decimal
	Fee           decimal.Decimal
	Liquidity     Liquidity
	RealizedPnL   decimal.Decimal // PnL of the part that closed a position, before fee
	Time          time.Time
}

// Position is an account's open position on one market.
type Position struct {
	Market        string
	Side          PositionSide
	Size          decimal.Decimal // absolute
	EntryPrice    decimal.Decimal // size-weighted average
	MarkPrice     decimal.Decimal
	UnrealizedPnL decimal.Decimal
	Notional      decimal.Decimal // size·mark
	Margin        decimal.Decimal // initial margin, notional/leverage
	Leverage      int
}

// Balance summarizes an account.
type Balance struct {
	Account        string
	Wallet         decimal.Decimal // deposits + realized PnL − fees + funding
	UnrealizedPnL  decimal.Decimal
	Equity         decimal.Decimal // Wallet + UnrealizedPnL
	AccountValue   decimal.Decimal // same as Equity
	PositionMargin decimal.Decimal // initial margin of positions
	OrderMargin    decimal.Decimal // margin reserved by open orders
	FreeCollateral decimal.Decimal // Equity − PositionMargin − OrderMargin
	RealizedPnL    decimal.Decimal // cumulative
	FeesPaid       decimal.Decimal // cumulative
	FundingPaid    decimal.Decimal // cumulative; negative when received
}

// MarketInfo describes a market and its current state.
type MarketInfo struct {
	Symbol          string
	Base            string
	Quote           string
	TickSize        decimal.Decimal
	LotSize         decimal.Decimal
	MinNotional     decimal.Decimal
	MaxLeverage     int
	MarkPrice       decimal.Decimal
	IndexPrice      decimal.Decimal
	FundingRate     decimal.Decimal
	NextFundingTime time.Time
	FundingInterval time.Duration   // what FundingRate covers
	OpenInterest    decimal.Decimal // in base units
}

// Prices are a market's mark and index price at a time.
type Prices struct {
	Market string
	Mark   decimal.Decimal
	Index  decimal.Decimal
	Time   time.Time
}

// Level is one price level of a book.
type Level struct {
	Price decimal.Decimal
	Size  decimal.Decimal
}

// Book is a synthesized order book: bids best (highest) first, asks best
// (lowest) first.
type Book struct {
	Market string
	Bids   []Level
	Asks   []Level
	Time   time.Time
}

// Candle is one OHLCV bar; Time is the bar's start, aligned to its interval.
type Candle struct {
	Time   time.Time
	Open   decimal.Decimal
	High   decimal.Decimal
	Low    decimal.Decimal
	Close  decimal.Decimal
	Volume decimal.Decimal // base units
}

// Funding is a market's current funding rate and next funding time.
type Funding struct {
	Market   string
	Rate     decimal.Decimal // per interval, e.g. 0.0001 = 0.01%
	NextTime time.Time
	Interval time.Duration
}

// Fees are the maker and taker fees in basis points.
type Fees struct {
	MakerBps decimal.Decimal
	TakerBps decimal.Decimal
}

// Close is the result of closing a position.
type Close struct {
	Market        string
	ClosedSize    decimal.Decimal // zero when there was no position
	AvgClosePrice decimal.Decimal // zero when there was no position
	OrderID       string          // empty when there was no position
}
