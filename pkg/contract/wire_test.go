package contract

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestConnectorRequestHeaders: what the edge puts in header fields and
// body is what the connector reads back, guards included; a request
// without its account or credential is refused.
func TestConnectorRequestHeaders(t *testing.T) {
	capN := decimal.RequireFromString("2500.5")
	for name, req := range map[string]ConnectorRequest{
		"plain": {RequestID: "r1", Operation: OpGetMarkPrice, AccountID: "a1", Credential: CredentialInfo{ID: "c1"},
			Params: json.RawMessage(`{"market":"BTC"}`)},
		"guarded": {RequestID: "r2", Operation: OpPlaceLimitOrder, AccountID: "a1", Credential: CredentialInfo{ID: "c1"},
			Params: json.RawMessage(`{"market":"BTC","side":"BUY"}`), KeyID: "k1",
			Guards: &Guards{AllowedMarkets: []string{"BTC", "ETH-USDT-PERP"}, MaxOrderNotional: &capN}},
	} {
		t.Run(name, func(t *testing.T) {
			h, err := req.Header()
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := ReadConnectorRequest(req.Operation, h, req.Params)
			if err != nil {
				t.Fatal(err)
			}
			if got.Guards != nil && req.Guards != nil && got.Guards.MaxOrderNotional.Equal(*req.Guards.MaxOrderNotional) {
				got.Guards.MaxOrderNotional = req.Guards.MaxOrderNotional // decimals compare by value
			}
			if !reflect.DeepEqual(got, req) {
				t.Fatalf("read back %+v, sent %+v", got, req)
			}
		})
	}
	// The header form's deadline: RFC 3339 with nanoseconds.
	h, _ := ConnectorRequest{RequestID: "r", AccountID: "a", Credential: CredentialInfo{ID: "c"}}.Header()
	sent := time.Unix(1795722295, 305123456).UTC()
	h[HeaderDeadline] = []string{sent.Format(time.RFC3339Nano)}
	if _, got, err := ReadConnectorRequest(OpGetBalance, h, nil); err != nil || !got.Equal(sent) {
		t.Errorf("deadline read back as %v (%v), sent %v", got, err, sent)
	}
	for _, drop := range []string{HeaderAccountID, HeaderCredentialID} {
		h, _ := ConnectorRequest{RequestID: "r", AccountID: "a", Credential: CredentialInfo{ID: "c"}}.Header()
		delete(h, drop)
		if _, _, err := ReadConnectorRequest(OpGetBalance, h, nil); err == nil {
			t.Errorf("a request without %s was read", drop)
		}
	}
	// A 0.1.0 edge's request: the whole envelope as the body.
	old := ConnectorRequest{RequestID: "r0", AccountID: "a0", Credential: CredentialInfo{ID: "c0"},
		Params: json.RawMessage(`{"market":"ETH"}`), KeyID: "k0", Guards: &Guards{ReadOnly: true}}
	body, _ := json.Marshal(old)
	got, _, err := ReadConnectorRequest(OpGetMarkPrice, map[string][]string{HeaderRequestID: {"r0"}}, body)
	if err != nil {
		t.Fatalf("0.1.0 envelope: %v", err)
	}
	old.Operation = OpGetMarkPrice
	if !reflect.DeepEqual(got, old) {
		t.Fatalf("0.1.0 envelope read as %+v, sent %+v", got, old)
	}
	// Parameters alone, without the header fields, are not a request.
	if _, _, err := ReadConnectorRequest(OpGetMarkPrice, nil, []byte(`{"market":"ETH"}`)); err == nil {
		t.Error("parameters without header fields were read as a request")
	}
	h, _ = ConnectorRequest{RequestID: "r", AccountID: "a", Credential: CredentialInfo{ID: "c"}}.Header()
	h[HeaderGuards] = []string{"{not json"}
	if _, _, err := ReadConnectorRequest(OpGetBalance, h, nil); err == nil {
		t.Error("malformed guards were read")
	}
}
