package contract

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzRequest feeds arbitrary bodies through a /v1 body's decoding (step 5 and
// step 8): no input may panic, and every rejection is a 400 with a message.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"operation":"getMarkPrice","market":"BTC"}`,
		`{"operation":"placeBatchOrder","orders":[{"market":"BTC","side":"BUY","size":"1","price":"1"}]}`,
		`{"operation":"getCandles","market":"ETH","limit":1e999}`,
		`[1,2,3]`, `null`, `"x"`, `{"operation":5}`, `{"operation":"nope"}`,
		`{"operation":"getOrderbook","market":"BTC","depth":{"a":[[[[]]]]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkObjectFields(t, body)
		op, fields, ce := ParseRequest(body)
		if ce != nil {
			if ce.Status() != 400 || ce.Message == "" {
				t.Fatalf("parse rejected with %s (%d) %q", ce.Code, ce.Status(), ce.Message)
			}
			return
		}
		delete(fields, "credentialId")
		if _, ce := op.DecodeParams(fields); ce != nil && ce.Code != CodeInvalidRequest {
			t.Fatalf("params rejected with %s", ce.Code)
		}
	})
}

// checkObjectFields: ObjectFields agrees with json.Unmarshal into a map of
// raw messages, on what it accepts and on every member.
func checkObjectFields(t *testing.T, body []byte) {
	t.Helper()
	var want map[string]json.RawMessage
	wantOK := json.Unmarshal(body, &want) == nil && want != nil
	got, ok := ObjectFields(body)
	if ok != wantOK {
		t.Fatalf("ObjectFields(%q) ok = %v, json.Unmarshal says %v", body, ok, wantOK)
	}
	if len(got) != len(want) {
		t.Fatalf("ObjectFields(%q) = %d fields, json.Unmarshal %d", body, len(got), len(want))
	}
	for k, v := range want {
		if g, found := got[k]; !found || !bytes.Equal(g, v) {
			t.Fatalf("ObjectFields(%q)[%q] = %q (found %v), json.Unmarshal %q", body, k, g, found, v)
		}
	}
}

// TestJSONString: literals with and without escapes decode as
// json.Unmarshal decodes them; anything else is refused.
func TestJSONString(t *testing.T) {
	for _, lit := range []string{`""`, `"BTC-USD-PERP"`, `"a\"b"`, `"\u00e9t\u00e9"`, `"été"`, `"tab\tx"`, "\"\xff\"", `"\ud800"`} {
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		if got, ok := JSONString([]byte(lit)); !ok || got != want {
			t.Errorf("JSONString(%s) = %q, %v; want %q", lit, got, ok, want)
		}
	}
	for _, bad := range []string{``, `"`, `5`, `null`, `"a`, `a"`, "\"a\x01\""} {
		if got, ok := JSONString([]byte(bad)); ok {
			t.Errorf("JSONString(%q) = %q, want refused", bad, got)
		}
	}
}
