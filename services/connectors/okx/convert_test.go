package okx

import (
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// TestContractsBothWays: base units to contracts (floored to whole lots,
// DESIGN §7) and back, for ctVal 0.01 (BTC), 0.1 with fractional lots
// (ETH) and 10 (DOGE).
func TestContractsBothWays(t *testing.T) {
	btc := instMeta{ctVal: d("0.01"), lotSz: d("0.01"), minSz: d("0.01")}
	eth := instMeta{ctVal: d("0.1"), lotSz: d("0.01"), minSz: d("0.01")}
	doge := instMeta{ctVal: d("10"), lotSz: d("1"), minSz: d("1")}
	tests := []struct {
		name      string
		im        instMeta
		base      string
		contracts string
		back      string // base units of what is sent
	}{
		{"btc one contract", btc, "0.01", "1", "0.01"},
		{"btc fractional contracts", btc, "0.0123", "1.23", "0.0123"},
		{"btc below a lot floors", btc, "0.01239", "1.23", "0.0123"},
		{"btc smallest lot", btc, "0.0001", "0.01", "0.0001"},
		{"btc under one lot", btc, "0.00009", "0", "0"},
		{"eth", eth, "1.5", "15", "1.5"},
		{"doge ten", doge, "10", "1", "10"},
		{"doge floors to whole contracts", doge, "1234", "123", "1230"},
		{"doge under one contract", doge, "9", "0", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.im.contracts(d(tt.base))
			if !c.Equal(d(tt.contracts)) {
				t.Fatalf("contracts(%s) = %s, want %s", tt.base, c, tt.contracts)
			}
			if b := tt.im.base(c); !b.Equal(d(tt.back)) {
				t.Errorf("base(%s) = %s, want %s", c, b, tt.back)
			}
		})
	}
}

// TestSizeBelowOneLot: a size that floors to no contract is refused with
// a message naming the contract size, before anything is sent.
func TestSizeBelowOneLot(t *testing.T) {
	doge := instMeta{ctVal: d("10"), lotSz: d("1"), minSz: d("1")}
	m := connector.Market{Canonical: "DOGE-USDT-PERP", Native: "DOGE-USDT-SWAP", Base: "DOGE"}
	_, err := sized(connector.OrderRequest{Market: m, Size: d("9")}, doge)
	ce, ok := contract.AsError(err)
	if !ok || ce.Code != contract.CodeInvalidRequest || !strings.Contains(ce.Message, "contracts of 10 DOGE") {
		t.Fatalf("got %v", err)
	}
	if sz, err := sized(connector.OrderRequest{Market: m, Size: d("25")}, doge); err != nil || !sz.Equal(d("2")) {
		t.Errorf("25 DOGE: %s %v, want 2 contracts", sz, err)
	}
}

// TestClOrdID: OKX takes 1-32 letters and digits; our ids map to one
// deterministically, distinct ids to distinct ones.
func TestClOrdID(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"alphanumeric kept", "abc123", "abc123"},
		{"32 characters kept", strings.Repeat("a", 32), strings.Repeat("a", 32)},
		{"uuid loses its dashes", "0b6b2c3e-8a0f-4c8e-9d51-1f4a8f0b2c7d", "0b6b2c3e8a0f4c8e9d511f4a8f0b2c7d"},
		{"dashes hashed", "pub-okx-1", clOrdID("pub-okx-1")},
		{"33 characters hashed", strings.Repeat("a", 33), clOrdID(strings.Repeat("a", 33))},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clOrdID(tt.in)
			if got != tt.want || !okxIDPattern.MatchString(got) {
				t.Errorf("clOrdID(%q) = %q, want %q within OKX's rule", tt.in, got, tt.want)
			}
			if got != clOrdID(tt.in) {
				t.Error("not deterministic")
			}
		})
	}
	for _, in := range []string{"a-b", "ab", "a_b", "a.b", "0b6b2c3e-8a0f-4c8e-9d51-1f4a8f0b2c7d-tp",
		"0b6b2c3e-8a0f-4c8e-9d51-1f4a8f0b2c7d-sl", "0b6b2c3e-8a0f-4c8e-9d51-1f4a8f0b2c7d", strings.Repeat("a", 33), strings.Repeat("a", 34)} {
		got := clOrdID(in)
		if prev, dup := seen[got]; dup {
			t.Errorf("%q and %q share clOrdId %q", prev, in, got)
		}
		if !okxIDPattern.MatchString(got) {
			t.Errorf("clOrdID(%q) = %q breaks OKX's rule", in, got)
		}
		seen[got] = in
	}
	if clOrdID("pub-okx-1") == "pubokx1" {
		t.Error("a dashed id must not collide with its dashless form")
	}
}

func TestStatusFromWire(t *testing.T) {
	tests := []struct {
		state, source string
		filled        bool
		want          string
	}{
		{"live", "", false, contract.StatusOpen},
		{"partially_filled", "", true, contract.StatusOpen},
		{"filled", "", true, contract.StatusFilled},
		{"canceled", "1", false, contract.StatusCancelled},
		{"canceled", "1", true, contract.StatusCancelled},
		{"canceled", "31", false, contract.StatusRejected},
		// Cancelled by OKX itself with nothing filled, for a documented
		// source (0 system, 14 IOC unfilled) or one not known: refused.
		{"canceled", "0", false, contract.StatusRejected},
		{"canceled", "14", false, contract.StatusRejected},
		{"canceled", "", false, contract.StatusRejected},
		{"canceled", "0", true, contract.StatusCancelled},
		{"mmp_canceled", "", false, contract.StatusRejected},
	}
	for _, tt := range tests {
		if got := statusFromWire(tt.state, tt.source, tt.filled); got != tt.want {
			t.Errorf("statusFromWire(%s, %s, filled %v) = %s, want %s", tt.state, tt.source, tt.filled, got, tt.want)
		}
	}
	for state, want := range map[string]string{"live": contract.StatusPending, "pause": contract.StatusPending,
		"effective": contract.StatusFilled, "canceled": contract.StatusCancelled, "order_failed": contract.StatusRejected} {
		if got := algoStatusFromWire(state); got != want {
			t.Errorf("algoStatusFromWire(%s) = %s, want %s", state, got, want)
		}
	}
}

// TestFeeSign: OKX's fee is negative when paid; ours is a positive cost,
// and fee rates become basis points charged.
func TestFeeSign(t *testing.T) {
	im := instMeta{ctVal: d("0.01"), lotSz: d("1")}
	f := fillFromWire(fill{TradeID: "1", FillSz: dec{Decimal: d("2"), Given: true}, FillPx: dec{Decimal: d("95000"), Given: true}, Fee: dec{Decimal: d("-0.95"), Given: true}, Side: "buy"}, im)
	if !f.Fee.Equal(d("0.95")) || !f.Size.Equal(d("0.02")) || f.Side != contract.Buy {
		t.Errorf("fill %+v", f)
	}
	rebate := fillFromWire(fill{Fee: dec{Decimal: d("0.1"), Given: true}}, im)
	if !rebate.Fee.Equal(d("-0.1")) {
		t.Errorf("a rebate is a negative fee, got %s", rebate.Fee)
	}
	if got := bps(d("-0.0005")); !got.Equal(d("5")) {
		t.Errorf("bps(-0.0005) = %s, want 5", got)
	}
}

// TestCandlesFromWire: newest-first rows become oldest-first candles with
// volume from volCcy (base units), not vol (contracts).
func TestCandlesFromWire(t *testing.T) {
	rows := []candle{
		{"1735693200000", "2", "3", "1", "2.5", "700", "7", "17.5", "0"},
		{"1735689600000", "1", "2", "0.5", "2", "500", "5", "10", "1"},
	}
	got := candlesFromWire(rows)
	if len(got) != 2 || got[0].Time != 1735689600 || !got[0].Volume.Equal(d("5")) || !got[1].Close.Equal(d("2.5")) {
		t.Errorf("candles %+v", got)
	}
	if bars[1440] != "1Dutc" {
		t.Errorf("days must be UTC-aligned 1Dutc, got %s", bars[1440])
	}
}

func TestParseOrderID(t *testing.T) {
	tests := []struct {
		in   string
		id   string
		algo bool
		ok   bool
	}{
		{"1752588852617379840", "1752588852617379840", false, true},
		{"algo-2100000000000000001", "2100000000000000001", true, true},
		{"algo-", "", false, false},
		{"abc", "", false, false},
	}
	for _, tt := range tests {
		id, algo, err := parseOrderID(tt.in)
		if (err == nil) != tt.ok || id != tt.id || algo != tt.algo {
			t.Errorf("parseOrderID(%q) = %q %v %v", tt.in, id, algo, err)
		}
	}
}
