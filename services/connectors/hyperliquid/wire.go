package hyperliquid

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/perpgate/perpgate/pkg/connector"
)

// The L1 actions the connector signs. Field order is part of the signed
// hash (fact sheet §4.1): these structs are msgpack-encoded in declaration
// order, so never reorder their fields, and never use maps for them.

// OrderAction is the "order" action: one or more orders in one signature.
type OrderAction struct {
	Type     string      `json:"type" msgpack:"type"`
	Orders   []OrderWire `json:"orders" msgpack:"orders"`
	Grouping string      `json:"grouping" msgpack:"grouping"`
	Builder  *Builder    `json:"builder,omitempty" msgpack:"builder,omitempty"`
}

// OrderWire is one order of an OrderAction. P and S are decimal strings
// without trailing zeros; C is omitted (not null) when there is no cloid.
type OrderWire struct {
	Asset      int       `json:"a" msgpack:"a"`
	IsBuy      bool      `json:"b" msgpack:"b"`
	Price      string    `json:"p" msgpack:"p"`
	Size       string    `json:"s" msgpack:"s"`
	ReduceOnly bool      `json:"r" msgpack:"r"`
	Type       OrderType `json:"t" msgpack:"t"`
	Cloid      string    `json:"c,omitempty" msgpack:"c,omitempty"`
}

// OrderType holds exactly one of Limit or Trigger.
type OrderType struct {
	Limit   *LimitType   `json:"limit,omitempty" msgpack:"limit,omitempty"`
	Trigger *TriggerType `json:"trigger,omitempty" msgpack:"trigger,omitempty"`
}

// LimitType is a limit order's time in force: Gtc, Ioc or Alo (post-only).
type LimitType struct {
	TIF string `json:"tif" msgpack:"tif"`
}

// TriggerType is a trigger order fired on mark price; Tpsl is "tp" or "sl".
type TriggerType struct {
	IsMarket  bool   `json:"isMarket" msgpack:"isMarket"`
	TriggerPx string `json:"triggerPx" msgpack:"triggerPx"`
	Tpsl      string `json:"tpsl" msgpack:"tpsl"`
}

// Builder is an optional builder-fee attachment (unused by the gateway,
// decoded by the simulator so the hash covers it).
type Builder struct {
	B string `json:"b" msgpack:"b"`
	F int    `json:"f" msgpack:"f"`
}

// CancelAction cancels orders by exchange id.
type CancelAction struct {
	Type    string       `json:"type" msgpack:"type"`
	Cancels []CancelWire `json:"cancels" msgpack:"cancels"`
}

// CancelWire is one cancel by oid.
type CancelWire struct {
	Asset int    `json:"a" msgpack:"a"`
	Oid   uint64 `json:"o" msgpack:"o"`
}

// CancelByCloidAction cancels orders by client order id. Its keys differ
// from CancelAction's (asset/cloid, not a/o).
type CancelByCloidAction struct {
	Type    string              `json:"type" msgpack:"type"`
	Cancels []CancelByCloidWire `json:"cancels" msgpack:"cancels"`
}

// CancelByCloidWire is one cancel by cloid.
type CancelByCloidWire struct {
	Asset int    `json:"asset" msgpack:"asset"`
	Cloid string `json:"cloid" msgpack:"cloid"`
}

// UpdateLeverageAction sets an asset's leverage and margin mode.
type UpdateLeverageAction struct {
	Type     string `json:"type" msgpack:"type"`
	Asset    int    `json:"asset" msgpack:"asset"`
	IsCross  bool   `json:"isCross" msgpack:"isCross"`
	Leverage int    `json:"leverage" msgpack:"leverage"`
}

// NoopAction does nothing but consume a nonce.
type NoopAction struct {
	Type string `json:"type" msgpack:"type"`
}

// Action types.
const (
	ActionOrder          = "order"
	ActionCancel         = "cancel"
	ActionCancelByCloid  = "cancelByCloid"
	ActionUpdateLeverage = "updateLeverage"
	ActionNoop           = "noop"
)

// DecodeAction parses the JSON "action" of an /exchange body into its
// ordered struct, rejecting unknown fields: the venue deserializes into
// fixed types and hashes its own re-serialization (fact sheet §4.5).
func DecodeAction(raw json.RawMessage) (any, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("action: %w", err)
	}
	var v any
	switch head.Type {
	case ActionOrder:
		v = &OrderAction{}
	case ActionCancel:
		v = &CancelAction{}
	case ActionCancelByCloid:
		v = &CancelByCloidAction{}
	case ActionUpdateLeverage:
		v = &UpdateLeverageAction{}
	case ActionNoop:
		v = &NoopAction{}
	case ActionModify:
		v = &ModifyAction{}
	case ActionScheduleCancel:
		v = &ScheduleCancelAction{}
	default:
		return nil, fmt.Errorf("action type %q is not supported", head.Type)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("action %s: %w", head.Type, err)
	}
	return v, nil
}

// Signature is an ECDSA signature as /exchange carries it.
type Signature struct {
	R string `json:"r"`
	S string `json:"s"`
	V int    `json:"v"`
}

// ExchangeRequest is the body of POST /exchange. The Python SDK always sends
// vaultAddress and expiresAfter, null when unused.
type ExchangeRequest struct {
	Action       any       `json:"action"`
	Nonce        uint64    `json:"nonce"`
	Signature    Signature `json:"signature"`
	VaultAddress *string   `json:"vaultAddress"`
	ExpiresAfter *uint64   `json:"expiresAfter"`
}

// ExchangeResponse is an /exchange answer, HTTP 200 either way: status
// "ok" with a typed response, or "err" with a message string.
type ExchangeResponse struct {
	Status   string          `json:"status"`
	Response json.RawMessage `json:"response"`
}

// OkResponse is the "response" of a status-ok answer.
type OkResponse struct {
	Type string `json:"type"`
	Data *struct {
		Statuses []Status `json:"statuses"`
	} `json:"data,omitempty"`
}

// Status is one per-order (or per-cancel) outcome: the string "success"
// (or waitingForFill/waitingForTrigger), or an object with one of resting,
// filled or error.
type Status struct {
	Word    string         `json:"-"`
	Resting *RestingStatus `json:"resting,omitempty"`
	Filled  *FilledStatus  `json:"filled,omitempty"`
	Error   *string        `json:"error,omitempty"`
}

// RestingStatus is an order left on the book (or a trigger waiting).
type RestingStatus struct {
	Oid   connector.Int `json:"oid"`
	Cloid string        `json:"cloid,omitempty"`
}

// FilledStatus is an order that filled (an IOC possibly in part).
type FilledStatus struct {
	TotalSz string        `json:"totalSz"`
	AvgPx   string        `json:"avgPx"`
	Oid     connector.Int `json:"oid"`
	Cloid   string        `json:"cloid,omitempty"`
}

// UnmarshalJSON accepts a bare string or an object.
func (s *Status) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &s.Word)
	}
	type plain Status
	return json.Unmarshal(b, (*plain)(s))
}

// MarshalJSON writes a bare string for Word statuses.
func (s Status) MarshalJSON() ([]byte, error) {
	if s.Word != "" {
		return json.Marshal(s.Word)
	}
	type plain Status
	return json.Marshal(plain(s))
}

// Info responses (POST /info), only the fields the connector reads.

// Meta is the perp universe; an asset's id is its index.
type Meta struct {
	Universe []AssetMeta `json:"universe"`
}

// AssetMeta describes one perp.
type AssetMeta struct {
	Name         string `json:"name"`
	SzDecimals   int    `json:"szDecimals"`
	MaxLeverage  int    `json:"maxLeverage"`
	OnlyIsolated bool   `json:"onlyIsolated,omitempty"`
	IsDelisted   bool   `json:"isDelisted,omitempty"`
}

// AssetCtx is an asset's live context from metaAndAssetCtxs.
type AssetCtx struct {
	Funding      string   `json:"funding"`
	OpenInterest string   `json:"openInterest"`
	PrevDayPx    string   `json:"prevDayPx"`
	DayNtlVlm    string   `json:"dayNtlVlm"`
	Premium      *string  `json:"premium"`
	OraclePx     string   `json:"oraclePx"`
	MarkPx       string   `json:"markPx"`
	MidPx        *string  `json:"midPx"`
	ImpactPxs    []string `json:"impactPxs"`
	DayBaseVlm   string   `json:"dayBaseVlm"`
}

// L2Book is an order book snapshot: Levels[0] bids, Levels[1] asks.
type L2Book struct {
	Coin   string        `json:"coin"`
	Time   connector.Int `json:"time"`
	Levels [2][]L2Level  `json:"levels"`
}

// L2Level is one aggregated book level.
type L2Level struct {
	Px string `json:"px"`
	Sz string `json:"sz"`
	N  int    `json:"n"`
}

// CandleWire is one candleSnapshot bar.
type CandleWire struct {
	T  int64  `json:"t"`
	TC int64  `json:"T"`
	S  string `json:"s"`
	I  string `json:"i"`
	O  string `json:"o"`
	C  string `json:"c"`
	H  string `json:"h"`
	L  string `json:"l"`
	V  string `json:"v"`
	N  int    `json:"n"`
}

// ClearinghouseState is a user's perp account.
type ClearinghouseState struct {
	MarginSummary      MarginSummary   `json:"marginSummary"`
	CrossMarginSummary MarginSummary   `json:"crossMarginSummary"`
	Withdrawable       string          `json:"withdrawable"`
	AssetPositions     []AssetPosition `json:"assetPositions"`
	Time               connector.Int   `json:"time"`
}

// MarginSummary sums an account.
type MarginSummary struct {
	AccountValue    string `json:"accountValue"`
	TotalNtlPos     string `json:"totalNtlPos"`
	TotalRawUsd     string `json:"totalRawUsd"`
	TotalMarginUsed string `json:"totalMarginUsed"`
}

// AssetPosition wraps a position.
type AssetPosition struct {
	Type     string       `json:"type"`
	Position PositionWire `json:"position"`
}

// PositionWire is one perp position; Szi is signed.
type PositionWire struct {
	Coin           string   `json:"coin"`
	Szi            string   `json:"szi"`
	EntryPx        string   `json:"entryPx"`
	PositionValue  string   `json:"positionValue"`
	UnrealizedPnl  string   `json:"unrealizedPnl"`
	ReturnOnEquity string   `json:"returnOnEquity"`
	LiquidationPx  *string  `json:"liquidationPx"`
	MarginUsed     string   `json:"marginUsed"`
	Leverage       Leverage `json:"leverage"`
	MaxLeverage    int      `json:"maxLeverage,omitempty"`
}

// Leverage is a position's margin mode and multiplier.
type Leverage struct {
	Type  string `json:"type"`
	Value int    `json:"value"`
}

// FrontendOrder is one open order of frontendOpenOrders.
type FrontendOrder struct {
	Coin             string        `json:"coin"`
	Side             string        `json:"side"` // B or A
	LimitPx          string        `json:"limitPx"`
	Sz               string        `json:"sz"` // remaining
	Oid              connector.Int `json:"oid"`
	Timestamp        connector.Int `json:"timestamp"`
	OrigSz           string        `json:"origSz"`
	OrderType        string        `json:"orderType"`
	IsTrigger        bool          `json:"isTrigger"`
	TriggerPx        string        `json:"triggerPx"`
	TriggerCondition string        `json:"triggerCondition"`
	IsPositionTpsl   bool          `json:"isPositionTpsl"`
	ReduceOnly       bool          `json:"reduceOnly"`
	Tif              *string       `json:"tif"`
	Cloid            *string       `json:"cloid"`
	Children         []any         `json:"children"`
}

// UserFill is one fill of userFills.
type UserFill struct {
	Coin          string        `json:"coin"`
	Px            string        `json:"px"`
	Sz            string        `json:"sz"`
	Side          string        `json:"side"`
	Time          connector.Int `json:"time"`
	StartPosition string        `json:"startPosition"`
	Dir           string        `json:"dir"`
	ClosedPnl     string        `json:"closedPnl"`
	Hash          string        `json:"hash"`
	Oid           connector.Int `json:"oid"`
	Crossed       bool          `json:"crossed"`
	Fee           string        `json:"fee"`
	Tid           connector.Int `json:"tid"`
	FeeToken      string        `json:"feeToken"`
}

// UserFees is the fee part of userFees; rates are fractions.
type UserFees struct {
	UserCrossRate string `json:"userCrossRate"`
	UserAddRate   string `json:"userAddRate"`
}

// UserRole answers userRole: role is missing, user, agent, vault or
// subAccount; agents carry their master in Data.User.
type UserRole struct {
	Role string `json:"role"`
	Data *struct {
		User   string `json:"user,omitempty"`
		Master string `json:"master,omitempty"`
	} `json:"data,omitempty"`
}

// OrderStatusResponse answers orderStatus.
type OrderStatusResponse struct {
	Status string `json:"status"` // "order" or "unknownOid"
	Order  *struct {
		Order           FrontendOrder `json:"order"`
		Status          string        `json:"status"`
		StatusTimestamp int64         `json:"statusTimestamp"`
	} `json:"order,omitempty"`
}
