package hyperliquid

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func TestWirePrice(t *testing.T) {
	tests := []struct {
		name       string
		px         string
		szDecimals int
		dir        int
		want       string
	}{
		{"5 significant figures, buy down", "60123.456", 5, roundDown, "60123"},
		{"5 significant figures, sell up", "60123.456", 5, roundUp, "60124"},
		{"integer above 5 figures stays", "123456.7", 5, roundDown, "123456"},
		{"very large price", "98765432.1", 0, roundUp, "98765433"},
		{"decimals capped by szDecimals", "3.14159", 4, roundDown, "3.14"},
		{"sig figs before decimals", "1.234567", 0, roundNearest, "1.2346"},
		{"very small price, 6 decimals", "0.0000123456", 0, roundDown, "0.000012"},
		{"very small price up", "0.0000123456", 0, roundUp, "0.000013"},
		{"trailing zeros removed", "2000.0", 4, roundNearest, "2000"},
		{"trailing zeros in decimals", "0.01200", 0, roundNearest, "0.012"},
		{"sell up carries a digit", "99999.5", 5, roundUp, "100000"},
		{"szDecimals 5 leaves 1 decimal", "1670.14", 5, roundNearest, "1670.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, got := wirePrice(decimal.RequireFromString(tc.px), tc.szDecimals, tc.dir)
			if got != tc.want {
				t.Fatalf("wirePrice(%s, %d) = %s, want %s", tc.px, tc.szDecimals, got, tc.want)
			}
		})
	}
}

func TestWireSize(t *testing.T) {
	tests := []struct {
		name, sz   string
		szDecimals int
		want       string
	}{
		{"rounds down", "0.0147999", 4, "0.0147"},
		{"no trailing zeros", "0.0100", 5, "0.01"},
		{"integer lots", "1500.9", 0, "1500"},
		{"zero", "0.00001", 4, "0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := wireSize(decimal.RequireFromString(tc.sz), tc.szDecimals); got != tc.want {
				t.Fatalf("wireSize(%s, %d) = %s, want %s", tc.sz, tc.szDecimals, got, tc.want)
			}
		})
	}
}

func TestSlipped(t *testing.T) {
	mid := decimal.RequireFromString("93500")
	if _, px := slipped(mid, decimal.RequireFromString("0.05"), "BUY", 5); px != "98175" {
		t.Fatalf("buy bound %s, want 98175 (the ccxt market vector)", px)
	}
	if _, px := slipped(decimal.RequireFromString("61234.5"), decimal.RequireFromString("0.05"), "SELL", 5); px != "58173" {
		t.Fatalf("sell bound %s, want 58173 (58172.775 rounded toward mid)", px)
	}
}

func TestCloid(t *testing.T) {
	format := regexp.MustCompile(`^0x[0-9a-f]{32}$`)
	tests := []struct {
		name, cred, id, want string
	}{
		{"already a cloid, lowercased", "c1", "0xA1000000000000000000000000000001", "0xa1000000000000000000000000000001"},
		{"derived", "c1", "my-order-1", ""},
		// Pinned: first 16 bytes of SHA-256("<credentialId>:<clientOrderId>"). A
		// change would leave orders placed before it unreachable by their
		// clientOrderId (cancelOrder, repeats after a restart).
		{"known answer", "3f2a0f7e-5d1c-4a39-9b8e-2c6f1d0a7b44", "my-order-1", "0x0f4cfdfd2c078984c8767b649c76c9b3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Cloid(tc.cred, tc.id)
			if !format.MatchString(got) || (tc.want != "" && got != tc.want) {
				t.Fatalf("Cloid = %q, want %q in 0x+32 lowercase hex", got, tc.want)
			}
			if Cloid(tc.cred, tc.id) != got {
				t.Fatal("not stable")
			}
		})
	}
	if Cloid("c1", "x") == Cloid("c2", "x") || Cloid("c1", "x") == Cloid("c1", "y") {
		t.Fatal("cloids of different credentials or ids collide")
	}
}

func TestMarketFromMeta(t *testing.T) {
	m, ok := marketFromMeta(AssetMeta{Name: "kPEPE", SzDecimals: 0, MaxLeverage: 10})
	if !ok || m.Canonical != "1000PEPE-USD-PERP" || m.Native != "kPEPE" || m.Multiplier != 1000 || m.Base != "PEPE" ||
		m.TickSize.String() != "0.000001" || m.LotSize.String() != "1" {
		t.Fatalf("kPEPE: %+v", m)
	}
	m, _ = marketFromMeta(AssetMeta{Name: "BTC", SzDecimals: 5, MaxLeverage: 40})
	if m.Canonical != "BTC-USD-PERP" || m.TickSize.String() != "0.1" || m.LotSize.String() != "0.00001" || m.MinNotional.String() != "10" {
		t.Fatalf("BTC: %+v", m)
	}
}

// TestWirePriceProperties checks the venue's price rule on many prices of
// every magnitude from 1e-8 to 1e10 and every perp szDecimals: the wire
// string is plain (no exponent, no trailing zeros), has at most
// 6 − szDecimals decimals and, unless it is an integer, at most 5
// significant figures; buys never round up, sells never down; and the
// result is the nearest valid price on its side (closer than one unit of
// the last decimal the rule allows at that magnitude).
func TestWirePriceProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	plain := regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$`)
	for range 20000 {
		px := decimal.New(r.Int64N(1_000_000_000_000)+1, -int32(r.IntN(21))) // up to 12 digits, 1e-20 .. 1e12
		if px.LessThan(decimal.New(1, -8)) || px.GreaterThan(decimal.New(1, 10)) {
			continue
		}
		szDecimals := r.IntN(6)
		for _, dir := range []int{roundDown, roundUp} {
			got, s := wirePrice(px, szDecimals, dir)
			if got.IsZero() { // below the smallest tick, rounding down
				if dir != roundDown || !px.LessThan(decimal.New(1, -int32(maxPriceDecimals-szDecimals))) {
					t.Fatalf("wirePrice(%s, %d, %d) = 0", px, szDecimals, dir)
				}
				continue
			}
			if !plain.MatchString(s) || !decimal.RequireFromString(s).Equal(got) {
				t.Fatalf("wirePrice(%s, %d) wire %q is not plain or differs from %s", px, szDecimals, s, got)
			}
			decimals := 0
			if i := strings.IndexByte(s, '.'); i >= 0 {
				decimals = len(s) - i - 1
			}
			sig := len(strings.TrimLeft(strings.ReplaceAll(s, ".", ""), "0"))
			if decimals > maxPriceDecimals-szDecimals || (decimals > 0 && sig > 5) {
				t.Fatalf("wirePrice(%s, %d) = %s: %d decimals, %d significant figures", px, szDecimals, s, decimals, sig)
			}
			if (dir == roundDown && got.GreaterThan(px)) || (dir == roundUp && got.LessThan(px)) {
				t.Fatalf("wirePrice(%s, %d, %d) = %s is on the wrong side", px, szDecimals, dir, s)
			}
			unit := decimal.New(1, -priceDecimals(px, szDecimals))
			if got.Sub(px).Abs().GreaterThanOrEqual(unit) {
				t.Fatalf("wirePrice(%s, %d, %d) = %s is a whole step %s away", px, szDecimals, dir, s, unit)
			}
		}
	}
}
