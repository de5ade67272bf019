package symbol_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/symbol"
)

// forms is every input form DESIGN §7 promises to accept; it seeds FuzzParse.
var forms = []string{
	"BTC", "btc", "BTC-PERP", "BTC-USD", "BTC-USDT", "BTC-USDC", "BTC-USD-PERP",
	"BTC/USDT-P", "BTC/USDT:USDT", "BTCUSDT", "BTCUSD", "BTCUSDC", "BTC-USDT-SWAP",
	"ETH-USD-PERP", "1000PEPE", "1000PEPEUSDT", "kPEPE", "kPEPE-USD-PERP",
	"1000000MOG", "1MBABYDOGEUSDT", "1INCH-USDT", "0G-USDT", "btc_usdt", "BTC-PERPETUAL",
	"eth/usdc:usdc", "1000SATS-USDT-SWAP",
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want symbol.Symbol
	}{
		{name: "bare", in: "BTC", want: symbol.Symbol{Base: "BTC", Multiplier: 1}},
		{name: "lower case", in: "btc", want: symbol.Symbol{Base: "BTC", Multiplier: 1}},
		{name: "perp suffix", in: "BTC-PERP", want: symbol.Symbol{Base: "BTC", Multiplier: 1}},
		{name: "dash usd", in: "BTC-USD", want: symbol.Symbol{Base: "BTC", Quote: "USD", Multiplier: 1}},
		{name: "dash usdt", in: "BTC-USDT", want: symbol.Symbol{Base: "BTC", Quote: "USDT", Multiplier: 1}},
		{name: "dash usdc", in: "BTC-USDC", want: symbol.Symbol{Base: "BTC", Quote: "USDC", Multiplier: 1}},
		{name: "canonical", in: "BTC-USD-PERP", want: symbol.Symbol{Base: "BTC", Quote: "USD", Multiplier: 1}},
		{name: "canonical eth", in: "ETH-USD-PERP", want: symbol.Symbol{Base: "ETH", Quote: "USD", Multiplier: 1}},
		{name: "slash p", in: "BTC/USDT-P", want: symbol.Symbol{Base: "BTC", Quote: "USDT", Multiplier: 1}},
		{name: "ccxt linear", in: "BTC/USDT:USDT", want: symbol.Symbol{Base: "BTC", Quote: "USDT", Multiplier: 1}},
		{name: "ccxt lower case", in: "eth/usdc:usdc", want: symbol.Symbol{Base: "ETH", Quote: "USDC", Multiplier: 1}},
		{name: "concatenated usdt", in: "BTCUSDT", want: symbol.Symbol{Base: "BTC", Quote: "USDT", Multiplier: 1}},
		{name: "concatenated usd", in: "BTCUSD", want: symbol.Symbol{Base: "BTC", Quote: "USD", Multiplier: 1}},
		{name: "concatenated usdc", in: "BTCUSDC", want: symbol.Symbol{Base: "BTC", Quote: "USDC", Multiplier: 1}},
		{name: "concatenated with suffix", in: "ethusdt-perp", want: symbol.Symbol{Base: "ETH", Quote: "USDT", Multiplier: 1}},
		{name: "okx swap", in: "BTC-USDT-SWAP", want: symbol.Symbol{Base: "BTC", Quote: "USDT", Multiplier: 1}},
		{name: "underscore", in: "btc_usdt", want: symbol.Symbol{Base: "BTC", Quote: "USDT", Multiplier: 1}},
		{name: "perpetual suffix", in: "BTC-PERPETUAL", want: symbol.Symbol{Base: "BTC", Multiplier: 1}},
		{name: "multiplier bare", in: "1000PEPE", want: symbol.Symbol{Base: "PEPE", Multiplier: 1000}},
		{name: "multiplier concatenated", in: "1000PEPEUSDT", want: symbol.Symbol{Base: "PEPE", Quote: "USDT", Multiplier: 1000}},
		{name: "multiplier canonical", in: "1000PEPE-USDT-PERP", want: symbol.Symbol{Base: "PEPE", Quote: "USDT", Multiplier: 1000}},
		{name: "multiplier lower case", in: "1000pepe-usdt", want: symbol.Symbol{Base: "PEPE", Quote: "USDT", Multiplier: 1000}},
		{name: "kilo", in: "kPEPE", want: symbol.Symbol{Base: "PEPE", Multiplier: 1000}},
		{name: "kilo canonical", in: "kPEPE-USD-PERP", want: symbol.Symbol{Base: "PEPE", Quote: "USD", Multiplier: 1000}},
		{name: "all lower case k is an asset", in: "kpepe", want: symbol.Symbol{Base: "KPEPE", Multiplier: 1}},
		{name: "upper case k is an asset", in: "KSM-USDT", want: symbol.Symbol{Base: "KSM", Quote: "USDT", Multiplier: 1}},
		{name: "million", in: "1000000MOG", want: symbol.Symbol{Base: "MOG", Multiplier: 1_000_000}},
		{name: "1M prefix", in: "1MBABYDOGEUSDT", want: symbol.Symbol{Base: "BABYDOGE", Quote: "USDT", Multiplier: 1_000_000}},
		{name: "ten thousand", in: "10000LADYS-USDT-SWAP", want: symbol.Symbol{Base: "LADYS", Quote: "USDT", Multiplier: 10_000}},
		{name: "digit asset not a multiplier", in: "1INCH-USDT", want: symbol.Symbol{Base: "1INCH", Quote: "USDT", Multiplier: 1}},
		{name: "zero digit asset", in: "0GUSDT", want: symbol.Symbol{Base: "0G", Quote: "USDT", Multiplier: 1}},
		{name: "non power of ten prefix", in: "1200ABC", want: symbol.Symbol{Base: "1200ABC", Multiplier: 1}},
		{name: "largest multiplier", in: "1000000000X", want: symbol.Symbol{Base: "X", Multiplier: 1_000_000_000}},
		{name: "asset ending in usd with separator", in: "XUSD-USDT", want: symbol.Symbol{Base: "XUSD", Quote: "USDT", Multiplier: 1}},
		{name: "longest base", in: strings.Repeat("A", 30) + "-USDT-SWAP", want: symbol.Symbol{Base: strings.Repeat("A", 30), Quote: "USDT", Multiplier: 1}},
		{name: "longest multiplied base", in: "1MB" + strings.Repeat("A", 22), want: symbol.Symbol{Base: "B" + strings.Repeat("A", 22), Multiplier: 1_000_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := symbol.Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		reason string // Error.Reason must contain this
	}{
		{name: "empty", in: "", reason: "empty"},
		{name: "only whitespace", in: "   ", reason: "contains whitespace"},
		{name: "surrounding whitespace", in: " BTC", reason: "contains whitespace"},
		{name: "inner whitespace", in: "BTC USD", reason: "contains whitespace"},
		{name: "too long", in: strings.Repeat("A", symbol.MaxLength+1), reason: "longer than 40 characters"},
		{name: "illegal character", in: "BTC.USD", reason: `contains '.'`},
		{name: "non ascii", in: "BTC-USDΤ", reason: "only letters, digits"},
		{name: "no base", in: "-USD-PERP", reason: "missing base asset"},
		{name: "slash no base", in: "/USDT", reason: "missing base asset"},
		{name: "quote only", in: "USDT", reason: "missing base asset"},
		{name: "quote only with suffix", in: "USD-PERP", reason: "missing base asset"},
		{name: "multiplier only", in: "1000", reason: `base asset "1000" has no letter`},
		{name: "multiplier and quote only", in: "1000USDT", reason: `base asset "1000" has no letter`},
		{name: "trailing dash", in: "BTC-", reason: "empty part"},
		{name: "double dash", in: "BTC--PERP", reason: "empty part"},
		{name: "unknown quote", in: "BTC-EUR", reason: `unknown quote "EUR"`},
		{name: "dated future", in: "BTC-USD-240329", reason: `"240329" is not a perpetual suffix`},
		{name: "too many parts", in: "BTC-USD-PERP-X", reason: "too many parts"},
		{name: "after suffix", in: "BTC-PERP-USD", reason: "nothing may follow"},
		{name: "inverse", in: "BTC/USD:BTC", reason: "settle currency \"BTC\""},
		{name: "settle differs", in: "BTC/USDT:USDC", reason: "differs from quote"},
		{name: "colon without slash", in: "BTC-USDT:USDT", reason: "BASE/QUOTE:QUOTE"},
		{name: "slash without quote", in: "BTC/PERP", reason: "'/' must be followed by a quote"},
		{name: "second slash", in: "BTC-USDT/P", reason: "'/' may only separate"},
		{name: "base too long", in: strings.Repeat("A", 31), reason: "base asset longer than 30 characters"},
		{name: "multiplied base too long", in: "1MB" + strings.Repeat("A", 23), reason: "base asset longer than 30 characters"},
		{name: "multiplier too large", in: "10000000000PEPE", reason: "multiplier prefix larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := symbol.Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", tt.in, got)
			}
			var se *symbol.Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T is not a *symbol.Error", tt.in, err)
			}
			if se.Input != tt.in {
				t.Errorf("Error.Input = %q, want %q", se.Input, tt.in)
			}
			if !strings.Contains(se.Reason, tt.reason) {
				t.Errorf("Error.Reason = %q, want it to contain %q", se.Reason, tt.reason)
			}
			msg := err.Error()
			for _, part := range []string{"invalid market symbol", se.Reason, "BASE-QUOTE-PERP", "USD, USDT or USDC"} {
				if !strings.Contains(msg, part) {
					t.Errorf("message %q does not contain %q", msg, part)
				}
			}
		})
	}
}

func TestErrorTruncatesInput(t *testing.T) {
	long := strings.Repeat("x", 5000)
	_, err := symbol.Parse(long)
	if err == nil {
		t.Fatal("Parse of a 5000-byte input succeeded")
	}
	if n := len(err.Error()); n > 400 {
		t.Fatalf("message is %d bytes; the input should be truncated", n)
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name      string
		sym       symbol.Symbol
		quote     string
		canonical string
		prefixed  string
		kilo      string
		str       string
	}{
		{name: "plain", sym: symbol.Symbol{Base: "BTC", Quote: "USD", Multiplier: 1}, quote: "USDT",
			canonical: "BTC-USDT-PERP", prefixed: "BTC", kilo: "BTC", str: "BTC-USD-PERP"},
		{name: "own quote", sym: symbol.Symbol{Base: "ETH", Quote: "USDC", Multiplier: 1}, quote: "",
			canonical: "ETH-USDC-PERP", prefixed: "ETH", kilo: "ETH", str: "ETH-USDC-PERP"},
		{name: "no quote anywhere", sym: symbol.Symbol{Base: "SOL", Multiplier: 1}, quote: "",
			canonical: "SOL-PERP", prefixed: "SOL", kilo: "SOL", str: "SOL-PERP"},
		{name: "lower case quote", sym: symbol.Symbol{Base: "SOL", Multiplier: 1}, quote: "usd",
			canonical: "SOL-USD-PERP", prefixed: "SOL", kilo: "SOL", str: "SOL-PERP"},
		{name: "kilo multiplier", sym: symbol.Symbol{Base: "PEPE", Quote: "USDT", Multiplier: 1000}, quote: "USD",
			canonical: "1000PEPE-USD-PERP", prefixed: "1000PEPE", kilo: "kPEPE", str: "1000PEPE-USDT-PERP"},
		{name: "million multiplier", sym: symbol.Symbol{Base: "MOG", Multiplier: 1_000_000}, quote: "USDT",
			canonical: "1000000MOG-USDT-PERP", prefixed: "1000000MOG", kilo: "1000000MOG", str: "1000000MOG-PERP"},
		{name: "zero multiplier reads as one", sym: symbol.Symbol{Base: "BTC"}, quote: "USD",
			canonical: "BTC-USD-PERP", prefixed: "BTC", kilo: "BTC", str: "BTC-PERP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sym.Canonical(tt.quote); got != tt.canonical {
				t.Errorf("Canonical(%q) = %q, want %q", tt.quote, got, tt.canonical)
			}
			if got := tt.sym.PrefixedBase(); got != tt.prefixed {
				t.Errorf("PrefixedBase() = %q, want %q", got, tt.prefixed)
			}
			if got := tt.sym.KiloBase(); got != tt.kilo {
				t.Errorf("KiloBase() = %q, want %q", got, tt.kilo)
			}
			if got := tt.sym.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
		})
	}
}

// TestKiloRoundTrip checks that the kPEPE form a Hyperliquid adapter renders
// parses back to the same symbol.
func TestKiloRoundTrip(t *testing.T) {
	in := symbol.Symbol{Base: "PEPE", Quote: "USD", Multiplier: 1000}
	got, err := symbol.Parse(in.KiloBase() + "-USD-PERP")
	if err != nil {
		t.Fatal(err)
	}
	if got != in {
		t.Fatalf("got %+v, want %+v", got, in)
	}
}

func TestIsQuote(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{name: "usd", in: "USD", want: true},
		{name: "usdt lower", in: "usdt", want: true},
		{name: "usdc", in: "USDC", want: true},
		{name: "eur", in: "EUR", want: false},
		{name: "empty", in: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := symbol.IsQuote(tt.in); got != tt.want {
				t.Fatalf("IsQuote(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range forms {
		f.Add(s, "USDT")
	}
	f.Add("-USD-PERP", "")
	f.Add("BTC/USD:BTC", "USD")
	f.Fuzz(func(t *testing.T, in, quote string) {
		sym, err := symbol.Parse(in)
		if err != nil {
			var se *symbol.Error
			if !errors.As(err, &se) || se.Input != in {
				t.Fatalf("Parse(%q) returned %#v, want a *symbol.Error with the input", in, err)
			}
			return
		}
		if sym.Base == "" || sym.Base != strings.ToUpper(sym.Base) || sym.Multiplier < 1 {
			t.Fatalf("Parse(%q) = %+v: base must be non-empty upper case, multiplier >= 1", in, sym)
		}
		if sym.Quote != "" && !symbol.IsQuote(sym.Quote) {
			t.Fatalf("Parse(%q) = %+v: unknown quote", in, sym)
		}
		own := sym.Canonical("")
		back, err := symbol.Parse(own)
		if err != nil || back != sym {
			t.Fatalf("Parse(Canonical(\"\")) of %q: %q gives %+v, %v; want %+v", in, own, back, err, sym)
		}
		if !symbol.IsQuote(quote) {
			return
		}
		other := sym.Canonical(quote)
		back, err = symbol.Parse(other)
		want := sym
		want.Quote = strings.ToUpper(quote)
		if err != nil || back != want {
			t.Fatalf("Parse(Canonical(%q)) of %q: %q gives %+v, %v; want %+v", quote, in, other, back, err, want)
		}
	})
}
