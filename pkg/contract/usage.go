package contract

import (
	"encoding/json"
	"time"
)

// UsageEntry counts one key's requests of one operation on one UTC day
// (DESIGN §12): every request that passed authentication, ok or failed.
// Operation is "invalid" for a body that named no known operation.
type UsageEntry struct {
	KeyID     string `json:"keyId"`
	Day       string `json:"day"` // YYYY-MM-DD, UTC
	Operation string `json:"operation"`
	OK        int64  `json:"ok"`
	Failed    int64  `json:"failed"`
}

// UsageReport is what an edge publishes on Subjects.Usage: the counts it
// gathered since its last report.
type UsageReport struct {
	Entries []UsageEntry `json:"entries"`
}

// UsageInvalidOperation is the operation usage counts a request under when
// its body named no known operation.
const UsageInvalidOperation = "invalid"

// AuditEntry records one trading call (a placement, cancel, close-all or
// leverage change), allowed or refused (DESIGN §12). Code is OK or the
// error code; PENDING while the call is with the exchange, so an edge that
// dies mid-call leaves a record of it.
type AuditEntry struct {
	Time         time.Time       `json:"time"`
	RequestID    string          `json:"requestId"`
	AccountID    string          `json:"accountId"`
	KeyID        string          `json:"keyId"`
	KeyDisplay   string          `json:"keyDisplay"`
	CredentialID string          `json:"credentialId,omitempty"`
	Exchange     Exchange        `json:"exchange,omitempty"`
	Operation    string          `json:"operation"`
	Params       json.RawMessage `json:"params,omitempty"`
	Code         string          `json:"code"`
	Message      string          `json:"message,omitempty"`
	OrderIDs     []string        `json:"orderIds"`
	DurationMs   float64         `json:"durationMs"` // a latency, not money: fractional milliseconds
	Via          string          `json:"via"`        // "v1", "mcp", or "admin" (a halt)
}

// AuditPending is the code of an audit entry whose call has not finished.
const AuditPending = "PENDING"

// UsageDay is one UTC day of a key's usage, by operation.
type UsageDay struct {
	Date        string                     `json:"date"`
	ByOperation map[string]OperationCounts `json:"byOperation"`
}

// OperationCounts counts one operation's requests on one day.
type OperationCounts struct {
	OK     int64 `json:"ok"`
	Failed int64 `json:"failed"`
}

// AuditPage is one page of an account's audit trail, oldest first;
// NextCursor is null on the last page.
type AuditPage struct {
	Entries    []AuditEntry `json:"entries"`
	NextCursor *string      `json:"nextCursor"`
}
