package contract

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestConnectorRequestFrame: what the edge frames is what the connector
// reads back, deadline and guards included.
func TestConnectorRequestFrame(t *testing.T) {
	capN := decimal.RequireFromString("2500.5")
	deadline := time.Unix(1795722295, 305123456)
	for name, tc := range map[string]struct {
		req      ConnectorRequest
		deadline time.Time
	}{
		"plain": {ConnectorRequest{RequestID: "r1", Operation: OpGetMarkPrice, AccountID: "a1", Credential: CredentialInfo{ID: "c1"},
			Params: json.RawMessage(`{"market":"BTC"}`)}, deadline},
		"guarded": {ConnectorRequest{RequestID: "r2", Operation: OpPlaceLimitOrder, AccountID: "a1", Credential: CredentialInfo{ID: "c1"},
			Params: json.RawMessage(`{"market":"BTC",` + "\n" + `"side":"BUY"}`), KeyID: "k1",
			Guards: &Guards{AllowedMarkets: []string{"BTC", "line\nbreak"}, MaxOrderNotional: &capN}}, deadline},
		"no deadline, no params": {ConnectorRequest{RequestID: "r3", Operation: OpGetBalance, AccountID: "a1",
			Credential: CredentialInfo{ID: "c1"}, Params: json.RawMessage{}}, time.Time{}},
	} {
		t.Run(name, func(t *testing.T) {
			body, ok := tc.req.AppendFrame(nil, tc.deadline)
			if !ok {
				t.Fatal("not framed")
			}
			got, gotDeadline, err := ReadConnectorRequest(tc.req.Operation, nil, body)
			if err != nil {
				t.Fatal(err)
			}
			if !gotDeadline.Equal(tc.deadline) {
				t.Errorf("deadline read back %v, sent %v", gotDeadline, tc.deadline)
			}
			if got.Guards != nil && tc.req.Guards != nil && got.Guards.MaxOrderNotional.Equal(*tc.req.Guards.MaxOrderNotional) {
				got.Guards.MaxOrderNotional = tc.req.Guards.MaxOrderNotional // decimals compare by value
			}
			if !reflect.DeepEqual(got, tc.req) {
				t.Fatalf("read back %+v, sent %+v", got, tc.req)
			}
		})
	}
}

// An ID that would break the frame is not framed: the edge sends the
// header form instead.
func TestConnectorRequestNotFramed(t *testing.T) {
	base := ConnectorRequest{RequestID: "r", AccountID: "a", Credential: CredentialInfo{ID: "c"}}
	for name, edit := range map[string]func(*ConnectorRequest){
		"empty account":         func(r *ConnectorRequest) { r.AccountID = "" },
		"space in credential":   func(r *ConnectorRequest) { r.Credential.ID = "c 1" },
		"line break in request": func(r *ConnectorRequest) { r.RequestID = "r\n1" },
		"key id of a dash":      func(r *ConnectorRequest) { r.KeyID = "-" },
	} {
		r := base
		edit(&r)
		if b, ok := r.AppendFrame([]byte("x"), time.Now()); ok || string(b) != "x" {
			t.Errorf("%s: framed as %q", name, b)
		}
	}
}

func TestConnectorRequestFrameRefused(t *testing.T) {
	for _, body := range []string{
		"PGR1 r a c 0 -",                // no line end
		"PGR1 r a c 0 -\n",              // no guards line end
		"PGR1 r a c 0\n\n{}",            // a field missing
		"PGR1 r a c 0 - x\n\n{}",        // a field too many
		"PGR1 r  a c 0 -\n\n{}",         // an empty field
		"PGR1 r a c soon -\n\n{}",       // deadline not a number
		"PGR1 r a c -5 -\n\n{}",         // deadline negative
		"PGR1 r a c 0 k\n{not json\n{}", // guards not JSON
	} {
		if _, _, err := ReadConnectorRequest(OpGetBalance, nil, []byte(body)); err == nil {
			t.Errorf("%q was read", body)
		} else if !strings.HasPrefix(err.Error(), "connector request frame: ") {
			t.Errorf("%q: error %q does not say what was wrong with the frame", body, err)
		}
	}
}

// FuzzConnectorRequestFrame: any body starting with the frame's magic is
// read or refused, never a panic, and a request read back frames again and
// reads back the same.
func FuzzConnectorRequestFrame(f *testing.F) {
	f.Add([]byte("PGR1 r a c 0 -\n\n{}"))
	f.Add([]byte("PGR1 r a c 1795722295305123456 k\n{\"readOnly\":true}\n{\"market\":\"BTC\"}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, deadline, err := ReadConnectorRequest(OpGetBalance, nil, body)
		if err != nil {
			return
		}
		again, ok := r.AppendFrame(nil, deadline)
		if !ok {
			t.Fatalf("%q read back as %+v but does not frame", body, r)
		}
		r2, deadline2, err := ReadConnectorRequest(OpGetBalance, nil, again)
		if err == nil { // guards compare by their JSON: decimals are equal by value
			g1, _ := json.Marshal(r.Guards)
			g2, _ := json.Marshal(r2.Guards)
			if string(g1) != string(g2) {
				t.Fatalf("guards %s read back as %s", g1, g2)
			}
			r.Guards, r2.Guards = nil, nil
		}
		if err != nil || !reflect.DeepEqual(r2, r) || !deadline2.Equal(deadline) {
			t.Fatalf("%q framed again as %q, which reads back as %+v, %v, %v", body, again, r2, deadline2, err)
		}
	})
}
