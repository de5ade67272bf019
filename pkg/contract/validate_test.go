package contract

import (
	"encoding/json"
	"strings"
	"testing"
)

func fieldsOf(t *testing.T, s string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

func TestDecodeParams(t *testing.T) {
	tests := []struct {
		name    string
		op      string
		body    string
		wantErr string // substring of the INVALID_REQUEST message; empty means success
		check   func(t *testing.T, p any)
	}{
		{name: "defaults applied", op: OpGetCandles, body: `{"market":"BTC"}`, check: func(t *testing.T, p any) {
			c := p.(*CandlesParams)
			if c.Interval != "60" || c.Limit != 100 {
				t.Fatalf("defaults not applied: %+v", c)
			}
		}},
		{name: "candles limit over 500", op: OpGetCandles, body: `{"market":"BTC","limit":501}`, wantErr: `"limit" must be at most 500`},
		{name: "interval enum", op: OpGetCandles, body: `{"market":"BTC","interval":"7"}`, wantErr: `"interval" must be one of`},
		{name: "interval as number", op: OpGetCandles, body: `{"market":"BTC","interval":60}`, wantErr: `"interval" must be a string`},
		{name: "missing market", op: OpGetMarkPrice, body: `{}`, wantErr: `missing required field "market"`},
		{name: "bad market", op: OpGetMarkPrice, body: `{"market":"$$$"}`, wantErr: `"market"`},
		{name: "unknown field", op: OpGetMarkPrice, body: `{"market":"BTC","foo":1}`, wantErr: `unknown field "foo"`},
		{name: "no params op with extra", op: OpGetBalance, body: `{"x":1}`, wantErr: `takes no parameters`},
		{name: "size as number", op: OpPlaceLimitOrder, body: `{"market":"BTC","side":"BUY","size":1,"price":"1"}`, wantErr: `"size" must be a decimal string`},
		{name: "size zero", op: OpPlaceLimitOrder, body: `{"market":"BTC","side":"BUY","size":"0","price":"1"}`, wantErr: `"size" must be greater than zero`},
		{name: "size negative", op: OpPlaceLimitOrder, body: `{"market":"BTC","side":"BUY","size":"-1","price":"1"}`, wantErr: `"size" must be greater than zero`},
		{name: "size exponent", op: OpPlaceLimitOrder, body: `{"market":"BTC","side":"BUY","size":"1e9","price":"1"}`, wantErr: `plain decimal`},
		{name: "huge number", op: OpGetOrderbook, body: `{"market":"BTC","depth":1e400}`, wantErr: `"depth" must be a whole number`},
		{name: "bad side", op: OpPlaceLimitOrder, body: `{"market":"BTC","side":"LONG","size":"1","price":"1"}`, wantErr: `"side" must be one of BUY, SELL`},
		{name: "postOnly not bool", op: OpPlaceLimitOrder, body: `{"market":"BTC","side":"BUY","size":"1","price":"1","postOnly":"yes"}`, wantErr: `"postOnly" must be true or false`},
		{name: "clientOrderId charset", op: OpPlaceLimitOrder, body: `{"market":"BTC","side":"BUY","size":"1","price":"1","clientOrderId":"a b"}`, wantErr: `"clientOrderId"`},
		{name: "limit order ok", op: OpPlaceLimitOrder, body: `{"market":"BTC","side":"SELL","size":"0.010","price":"65000.5","postOnly":true}`, check: func(t *testing.T, p any) {
			o := p.(*LimitOrderParams)
			if o.Size.String() != "0.01" || o.Price.String() != "65000.5" || !o.PostOnly || o.ReduceOnly {
				t.Fatalf("decoded %+v", o)
			}
		}},
		{name: "stop reduceOnly default true", op: OpPlaceStopOrder, body: `{"market":"BTC","side":"SELL","size":"1","triggerPrice":"100"}`, check: func(t *testing.T, p any) {
			if !p.(*StopOrderParams).ReduceOnly {
				t.Fatal("reduceOnly should default to true")
			}
		}},
		{name: "batch over 10", op: OpPlaceBatchOrder, body: `{"orders":[` + strings.Repeat(`{"market":"BTC","side":"BUY","size":"1","price":"1"},`, 10) + `{"market":"BTC","side":"BUY","size":"1","price":"1"}]}`, wantErr: `at most 10 items, got 11`},
		{name: "batch empty", op: OpPlaceBatchOrder, body: `{"orders":[]}`, wantErr: `at least 1 items`},
		{name: "batch item field named", op: OpPlaceBatchOrder, body: `{"orders":[{"market":"BTC","side":"BUY","size":"1"}]}`, wantErr: `"orders[0].price"`},
		{name: "batch orderType", op: OpPlaceBatchOrder, body: `{"orders":[{"market":"BTC","side":"BUY","size":"1","price":"1","orderType":"MARKET"}]}`, wantErr: `"orders[0].orderType" must be one of LIMIT`},
		{name: "protection needs a leg", op: OpPlaceProtectionOrders, body: `{"market":"BTC","side":"LONG","size":"1","entryPrice":"100"}`, wantErr: `tpPercent, slPercent or both`},
		{name: "protection percent as number", op: OpPlaceProtectionOrders, body: `{"market":"BTC","side":"LONG","size":"1","entryPrice":"100","tpPercent":5,"slPercent":"2.5"}`, check: func(t *testing.T, p any) {
			pp := p.(*ProtectionParams)
			if pp.TPPercent.String() != "5" || pp.SLPercent.String() != "2.5" {
				t.Fatalf("decoded %+v", pp)
			}
		}},
		{name: "leverage bounds", op: OpSetLeverage, body: `{"market":"BTC","leverage":0}`, wantErr: `"leverage" must be at least 1`},
		{name: "leverage fraction", op: OpSetLeverage, body: `{"market":"BTC","leverage":2.5}`, wantErr: `whole number`},
		{name: "null is absent", op: OpGetOrders, body: `{"market":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, _ := Lookup(tt.op)
			p, err := op.DecodeParams(fieldsOf(t, tt.body))
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("want error containing %q, got success %+v", tt.wantErr, p)
				}
				if err.Code != CodeInvalidRequest || err.Status() != 400 || !strings.Contains(err.Message, tt.wantErr) {
					t.Fatalf("got %s %q, want INVALID_REQUEST containing %q", err.Code, err.Message, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.check != nil {
				tt.check(t, p)
			}
		})
	}
}

// FuzzDecodeParams feeds arbitrary bodies to every operation's decoder: it
// must never panic, and whatever it accepts must cross the bus unchanged.
func FuzzDecodeParams(f *testing.F) {
	seeds := []string{
		`{"market":"BTC"}`, `{"market":"BTC","depth":5}`, `{"orders":[{"market":"ETH","side":"BUY","size":"1","price":"2"}]}`,
		`{"market":"BTC","side":"LONG","size":"1","entryPrice":"100","tpPercent":5}`, `{"a":[[[[[[1]]]]]]}`,
		`{"market":"BTC","size":"1e99999999","side":"BUY","price":"1"}`, `{"leverage":99999999999999999999999}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, opIdx uint8, body string) {
		var fields map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &fields) != nil {
			return
		}
		op := Operations[int(opIdx)%len(Operations)]
		p, err := op.DecodeParams(fields)
		if err != nil {
			if err.Code != CodeInvalidRequest || err.Message == "" {
				t.Fatalf("decoder error %s with message %q", err.Code, err.Message)
			}
			return
		}
		b, mErr := json.Marshal(p)
		if mErr != nil {
			t.Fatalf("accepted params do not encode: %v", mErr)
		}
		// The connector decodes what the edge re-encodes: it must round-trip.
		again := op.NewParams()
		if err := json.Unmarshal(b, again); err != nil {
			t.Fatalf("re-encoded params do not decode: %v (%s)", err, b)
		}
		if b2, _ := json.Marshal(again); string(b2) != string(b) {
			t.Fatalf("params changed crossing the bus: %s -> %s", b, b2)
		}
	})
}
