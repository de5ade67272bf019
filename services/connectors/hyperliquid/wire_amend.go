package hyperliquid

// ModifyAction amends one resting order in place: oid names it, order is
// the whole order after the change
// (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/exchange-endpoint#modify-an-order).
type ModifyAction struct {
	Type  string    `json:"type" msgpack:"type"`
	Oid   uint64    `json:"oid" msgpack:"oid"`
	Order OrderWire `json:"order" msgpack:"order"`
}

// ScheduleCancelAction cancels every open order at Time (Unix ms, at least
// 5 s ahead); without Time it removes the scheduled cancel
// (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/exchange-endpoint#schedule-cancel-dead-mans-switch).
type ScheduleCancelAction struct {
	Type string  `json:"type" msgpack:"type"`
	Time *uint64 `json:"time,omitempty" msgpack:"time,omitempty"`
}

// Action types of the extension operations.
const (
	ActionModify         = "modify"
	ActionScheduleCancel = "scheduleCancel"
)
