package fapi

import (
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
)

// TestEventsVenueDifferences: the knobs Aster sets (Stops, AbsFee,
// FundingOnly) against Binance's defaults, on the same frames.
func TestEventsVenueDifferences(t *testing.T) {
	stop := `{"e":"ORDER_TRADE_UPDATE","E":1,"o":{"s":"BTCUSDT","S":"SELL","c":"x","o":"STOP_MARKET","q":"1","p":"0","sp":"90000","X":"NEW","x":"NEW","i":7,"z":"0"}}`
	trade := `{"e":"ORDER_TRADE_UPDATE","E":1,"o":{"s":"BTCUSDT","S":"BUY","o":"LIMIT","q":"1","p":"100","ap":"100","X":"FILLED","x":"TRADE","i":7,"l":"1","L":"100","z":"1","n":"-0.5","t":9,"T":2000}}`
	funding := `{"e":"ACCOUNT_UPDATE","E":1,"a":{"m":"FUNDING_FEE","B":[{"a":"USDT","wb":"10","bc":"-0.1"}],"P":[{"s":"BTCUSDT","pa":"1","ep":"100","up":"0","ps":"BOTH"}]}}`
	aster, binance := Events{Venue: "Aster", Stops: true, AbsFee: true, FundingOnly: true}, Events{Venue: "Binance"}
	read := func(e Events, frame string) []any {
		t.Helper()
		evs, err := e.Read([]byte(frame))
		if err != nil {
			t.Fatal(err)
		}
		var out []any
		for _, ev := range evs {
			out = append(out, ev.Data)
		}
		return out
	}
	if o := read(aster, stop)[0].(contract.OrderEvent); o.Status != contract.StatusPending || o.TriggerPrice == nil || o.TriggerPrice.String() != "90000" {
		t.Errorf("aster stop: %+v", o)
	}
	if o := read(binance, stop)[0].(contract.OrderEvent); o.Status != contract.StatusOpen || o.TriggerPrice != nil {
		t.Errorf("binance regular: %+v", o)
	}
	if f := read(aster, trade)[1].(contract.FillEvent); f.Fee.String() != "0.5" || f.FillID != "9" || f.Timestamp != 2 {
		t.Errorf("aster fill: %+v", f)
	}
	if f := read(binance, trade)[1].(contract.FillEvent); f.Fee.String() != "-0.5" {
		t.Errorf("binance fill: %+v", f)
	}
	if got := read(aster, funding); len(got) != 1 || got[0].(contract.FundingEvent).Amount.String() != "-0.1" {
		t.Errorf("aster funding: %+v", got)
	}
	if got := read(binance, funding); len(got) != 3 { // position, balance, funding
		t.Errorf("binance funding: %+v", got)
	}
	if _, err := binance.Read([]byte(`{"e":"listenKeyExpired","E":1}`)); err == nil {
		t.Error("listenKeyExpired read as no error")
	}
}
