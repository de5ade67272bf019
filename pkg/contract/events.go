package contract

import (
	"encoding/json"
	"strings"

	"github.com/shopspring/decimal"
)

// Account events (DESIGN §13): every order, fill, position, balance and
// funding change of a credential, pushed over GET /v1/events (SSE) and
// GET /v1/ws, and read back by getEvents and waitForOrder.

// EventType names what an Event's data holds.
type EventType string

// Event types.
const (
	EventOrder    EventType = "order"
	EventFill     EventType = "fill"
	EventPosition EventType = "position"
	EventBalance  EventType = "balance"
	EventFunding  EventType = "funding"
	EventError    EventType = "error"
	EventReset    EventType = "reset"
)

// EventTypes are the types a client may filter on, in documentation order.
var EventTypes = []EventType{EventOrder, EventFill, EventPosition, EventBalance, EventFunding, EventError, EventReset}

// Valid reports whether t is a known event type.
func (t EventType) Valid() bool {
	for _, x := range EventTypes {
		if x == t {
			return true
		}
	}
	return false
}

// Event sources: what the venue pushed, or what a REST snapshot showed had
// changed.
const (
	SourceStream    = "stream"
	SourceReconcile = "reconcile"
)

// Event is one account event on the wire. ID is opaque to clients: it
// resumes a stream (SSE id, Last-Event-ID, after=). Time is the venue's
// time and ReceivedAt the gateway's, both Unix ms.
type Event struct {
	ID           string          `json:"id"`
	Type         EventType       `json:"type"`
	CredentialID string          `json:"credentialId"`
	Exchange     Exchange        `json:"exchange"`
	Time         int64           `json:"time"`
	ReceivedAt   int64           `json:"receivedAt"`
	Source       string          `json:"source"`
	Data         json.RawMessage `json:"data"`
}

// Market returns the market the event is about, "" when none (balance,
// error, reset).
func (e *Event) Market() string {
	switch e.Type {
	case EventOrder, EventFill, EventPosition, EventFunding:
		var m struct {
			Market string `json:"market"`
		}
		if json.Unmarshal(e.Data, &m) == nil {
			return m.Market
		}
	}
	return ""
}

// OrderEvent is the data of an order event. A partly filled resting order
// is OPEN with FilledSize above zero.
type OrderEvent struct {
	OrderID       string           `json:"orderId"`
	ClientOrderID string           `json:"clientOrderId,omitempty"`
	Market        string           `json:"market"`
	Side          Side             `json:"side"`
	Type          string           `json:"type"`
	Size          decimal.Decimal  `json:"size"`
	Price         *decimal.Decimal `json:"price,omitempty"`
	TriggerPrice  *decimal.Decimal `json:"triggerPrice,omitempty"`
	FilledSize    decimal.Decimal  `json:"filledSize"`
	AvgPrice      *decimal.Decimal `json:"avgPrice,omitempty"`
	Status        string           `json:"status"`
	ReduceOnly    bool             `json:"reduceOnly"`
	Reason        string           `json:"reason,omitempty"`
}

// Final reports whether the order can change no more.
func (o OrderEvent) Final() bool {
	return o.Status == "FILLED" || o.Status == "CANCELLED" || o.Status == "REJECTED"
}

// FillEvent is the data of a fill event; Timestamp is Unix seconds, as in
// getFills.
type FillEvent struct {
	FillID        string           `json:"fillId"`
	OrderID       string           `json:"orderId"`
	ClientOrderID string           `json:"clientOrderId,omitempty"`
	Market        string           `json:"market"`
	Side          Side             `json:"side"`
	Size          decimal.Decimal  `json:"size"`
	Price         decimal.Decimal  `json:"price"`
	Fee           decimal.Decimal  `json:"fee"`
	FeeAsset      string           `json:"feeAsset"`
	Liquidity     string           `json:"liquidity"`
	RealizedPnl   *decimal.Decimal `json:"realizedPnl,omitempty"`
	Timestamp     int64            `json:"timestamp"`
}

// PositionFlat is the side of a position event once the position closed.
const PositionFlat PositionSide = "FLAT"

// PositionEvent is the data of a position event.
type PositionEvent struct {
	Market           string           `json:"market"`
	Side             PositionSide     `json:"side"`
	Size             decimal.Decimal  `json:"size"`
	EntryPrice       decimal.Decimal  `json:"entryPrice"`
	UnrealizedPnl    *decimal.Decimal `json:"unrealizedPnl,omitempty"`
	Leverage         *decimal.Decimal `json:"leverage,omitempty"`
	LiquidationPrice *decimal.Decimal `json:"liquidationPrice,omitempty"`
}

// BalanceEvent is the data of a balance event.
type BalanceEvent struct {
	Asset          string           `json:"asset"`
	Equity         *decimal.Decimal `json:"equity,omitempty"`
	FreeCollateral *decimal.Decimal `json:"freeCollateral,omitempty"`
	WalletBalance  *decimal.Decimal `json:"walletBalance,omitempty"`
}

// FundingEvent is the data of a funding event; Amount is negative when the
// account paid.
type FundingEvent struct {
	Market       string           `json:"market"`
	Amount       decimal.Decimal  `json:"amount"`
	Rate         *decimal.Decimal `json:"rate,omitempty"`
	PositionSize *decimal.Decimal `json:"positionSize,omitempty"`
}

// ErrorEvent is the data of an error event, e.g. the venue refused the
// private stream's login.
type ErrorEvent struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// WaitForOrderParams are waitForOrder's parameters.
type WaitForOrderParams struct {
	OrderID        string `json:"orderId,omitempty" op:"maxlen=128" desc:"The exchange order id; give this or clientOrderId."`
	ClientOrderID  string `json:"clientOrderId,omitempty" op:"clientid" desc:"Your client order id; give this or orderId."`
	Until          string `json:"until" op:"required,enum=filled|done|change" desc:"filled: fully filled; done: filled, cancelled or rejected; change: any change after the call."`
	TimeoutSeconds int    `json:"timeoutSeconds" op:"required,min=1,max=60" desc:"How long to wait at most, in seconds."`
}

// WaitForOrderResult is waitForOrder's result.
type WaitForOrderResult struct {
	Order   *OrderEvent `json:"order"`
	Reached bool        `json:"reached"`
}

// MaxEventsPage is the most events getEvents returns at once.
const MaxEventsPage = 500

// GetEventsParams are getEvents' parameters.
type GetEventsParams struct {
	After string `json:"after,omitempty" op:"maxlen=32" desc:"The id of the last event you have; from the oldest kept when absent."`
	Types string `json:"types,omitempty" op:"maxlen=80" desc:"Only these event types, comma-separated: order, fill, position, balance, funding, error."`
	Limit int    `json:"limit" op:"min=1,max=500,default=100" desc:"Most events to return."`
}

// GetEventsResult is getEvents' result: the events oldest first, and the
// id to pass as after next time.
type GetEventsResult struct {
	Events []Event `json:"events"`
	Next   string  `json:"next"`
}

// MaxOpenEventStreams caps the event streams (SSE and WebSocket
// subscriptions) a key may hold open at once, by tier.
func (t Tier) MaxOpenEventStreams() int {
	switch t {
	case TierPro:
		return 50
	case TierBuilder:
		return 10
	default:
		return 2
	}
}

// AccountEvents is the subject of a credential's events of one type:
// <prefix>.account.<exchange>.<credentialId>.<type>.
func (s Subjects) AccountEvents(x Exchange, credentialID string, t EventType) string {
	return s.AccountEventsOf(x, credentialID) + "." + string(t)
}

// AccountEventsOf is the subject filter of every event of one credential.
func (s Subjects) AccountEventsOf(x Exchange, credentialID string) string {
	return s.Prefix + ".account." + string(x) + "." + credentialID
}

// AccountEventsRoot is the subject filter of every account event.
func (s Subjects) AccountEventsRoot() string { return s.Prefix + ".account.>" }

// AccountEventStream names the JetStream stream that keeps account events
// for the retention period; an event's id is its sequence there.
func (s Subjects) AccountEventStream() string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_", "*", "_", ">", "_").Replace(s.Prefix)) + "_ACCOUNT_EVENTS"
}
