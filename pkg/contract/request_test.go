package contract

import (
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
