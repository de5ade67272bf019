package contract

// HaltRequest is the body of POST /admin/v1/keys/{id}/halt, the kill
// switch (DESIGN §13): the key becomes read-only, and with these flags the
// gateway also cancels the open orders and closes the positions on the
// credentials the key may use.
type HaltRequest struct {
	CancelOrders   bool `json:"cancelOrders,omitempty"`
	ClosePositions bool `json:"closePositions,omitempty"`
}

// HaltResult is what a halt did: the key, now read-only, and per
// credential in its scope the orders cancelled and positions closed.
type HaltResult struct {
	ID          string           `json:"id"`
	ReadOnly    bool             `json:"readOnly"`
	Credentials []CredentialHalt `json:"credentials"`
}

// CredentialHalt is a halt's work on one credential. Error is the first
// failure (a connector down, a venue refusal); the counts say what was
// done before and after it.
type CredentialHalt struct {
	CredentialID    string `json:"credentialId"`
	CancelledOrders int    `json:"cancelledOrders"`
	ClosedPositions int    `json:"closedPositions"`
	Error           *Error `json:"error,omitempty"`
}
