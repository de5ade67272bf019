package symbol_test

import (
	"fmt"

	"github.com/perpgate/perpgate/pkg/symbol"
)

func ExampleParse() {
	for _, in := range []string{"btc", "BTC/USDT:USDT", "ETHUSDC", "1000PEPEUSDT", "kPEPE-USD-PERP"} {
		s, err := symbol.Parse(in)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-15s base=%s quote=%q x%d canonical(USDT)=%s\n", in, s.Base, s.Quote, s.Multiplier, s.Canonical("USDT"))
	}
	// Output:
	// btc             base=BTC quote="" x1 canonical(USDT)=BTC-USDT-PERP
	// BTC/USDT:USDT   base=BTC quote="USDT" x1 canonical(USDT)=BTC-USDT-PERP
	// ETHUSDC         base=ETH quote="USDC" x1 canonical(USDT)=ETH-USDT-PERP
	// 1000PEPEUSDT    base=PEPE quote="USDT" x1000 canonical(USDT)=1000PEPE-USDT-PERP
	// kPEPE-USD-PERP  base=PEPE quote="USD" x1000 canonical(USDT)=1000PEPE-USDT-PERP
}

func ExampleSymbol_KiloBase() {
	s, _ := symbol.Parse("1000PEPE-USDT-PERP")
	fmt.Println(s.PrefixedBase(), s.KiloBase(), s.Canonical("USD"))
	// Output: 1000PEPE kPEPE 1000PEPE-USD-PERP
}

func ExampleParse_error() {
	_, err := symbol.Parse("-USD-PERP")
	fmt.Println(err)
	// Output: invalid market symbol "-USD-PERP": missing base asset; use BASE, BASE-QUOTE, BASE-QUOTE-PERP, BASE/QUOTE:QUOTE or BASEQUOTE with quote USD, USDT or USDC (e.g. BTC, BTC-USD-PERP, BTCUSDT, 1000PEPE-USDT-PERP, kPEPE)
}
