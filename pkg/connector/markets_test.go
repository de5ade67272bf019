package connector

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// listingAdapter is an Adapter whose only working methods are Exchange and
// Markets; it counts the Markets calls.
type listingAdapter struct {
	Adapter
	mu    sync.Mutex
	list  []Market
	err   error
	calls int
}

func (a *listingAdapter) Exchange() contract.Exchange { return contract.Binance }

func (a *listingAdapter) Markets(context.Context, Credential) ([]Market, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls++
	return append([]Market(nil), a.list...), a.err
}

func (a *listingAdapter) set(list []Market, err error) {
	a.mu.Lock()
	a.list, a.err = list, err
	a.mu.Unlock()
}

func testMarket(native, base string, mult int, tick string) Market {
	return Market{Canonical: base + "-USDT-PERP", Native: native, Base: base, Quote: "USDT", Multiplier: mult,
		TickSize: decimal.RequireFromString(tick), LotSize: decimal.RequireFromString("0.001")}
}

// TestMarketCacheRefresh: market metadata is cached per environment for
// the TTL, refreshed after it, refreshed early (at most every minRefresh)
// for a symbol it does not know so a new listing shows up, and kept when
// a refresh fails.
func TestMarketCacheRefresh(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a := &listingAdapter{list: []Market{testMarket("BTCUSDT", "BTC", 1, "0.1")}}
	c := newMarketCache(5*time.Minute, clock)
	main := Credential{CredentialInfo: contract.CredentialInfo{Environment: contract.Mainnet}}
	test := Credential{CredentialInfo: contract.CredentialInfo{Environment: contract.Testnet}}
	ctx := context.Background()
	resolve := func(cred Credential, raw string) (Market, error) { t.Helper(); return c.resolve(ctx, a, cred, raw) }

	if m, err := resolve(main, "BTC"); err != nil || m.Native != "BTCUSDT" || a.calls != 1 {
		t.Fatalf("first: %v %v, %d fetches", m, err, a.calls)
	}
	now = now.Add(4 * time.Minute)
	if _, err := resolve(main, "btc-usdt-perp"); err != nil || a.calls != 1 {
		t.Fatalf("within the TTL: %v, %d fetches, want 1", err, a.calls)
	}
	if _, err := resolve(test, "BTC"); err != nil || a.calls != 2 {
		t.Fatalf("testnet has its own list: %v, %d fetches, want 2", err, a.calls)
	}

	a.set([]Market{testMarket("BTCUSDT", "BTC", 1, "0.5")}, nil)
	now = now.Add(2 * time.Minute) // mainnet list 6 minutes old
	if m, _ := resolve(main, "BTC"); !m.TickSize.Equal(decimal.RequireFromString("0.5")) || a.calls != 3 {
		t.Fatalf("after the TTL: tick %s, %d fetches; want the new tick 0.5 and 3", m.TickSize, a.calls)
	}

	a.set([]Market{testMarket("BTCUSDT", "BTC", 1, "0.5"), testMarket("NEWUSDT", "NEW", 1, "0.01")}, nil)
	now = now.Add(10 * time.Second)
	_, err := resolve(main, "NEW")
	if ce, _ := contract.AsError(err); err == nil || ce.Code != contract.CodeUnknownMarket || a.calls != 3 {
		t.Fatalf("unknown symbol 10 s after a fetch: %v, %d fetches; want UNKNOWN_MARKET and no refetch", err, a.calls)
	}
	now = now.Add(30 * time.Second)
	if m, err := resolve(main, "NEW"); err != nil || m.Native != "NEWUSDT" || a.calls != 4 {
		t.Fatalf("unknown symbol 40 s after a fetch: %v %v, %d fetches; want the new listing after one refetch", m, err, a.calls)
	}

	a.set(nil, errors.New("exchangeInfo unreachable"))
	now = now.Add(10 * time.Minute)
	if m, err := resolve(main, "BTC"); err != nil || m.Native != "BTCUSDT" || a.calls != 5 {
		t.Fatalf("refresh failing: %v %v, %d fetches; want the stale list", m, err, a.calls)
	}
}

// TestMarketMatch: the client's symbol form does not matter, the
// multiplier does: kPEPE and 1000PEPE are the 1000PEPE listing, PEPE is
// not (its sizes would be off by 1000).
func TestMarketMatch(t *testing.T) {
	a := &listingAdapter{list: []Market{testMarket("BTCUSDT", "BTC", 1, "0.1"), testMarket("1000PEPEUSDT", "PEPE", 1000, "0.0000001")}}
	c := newMarketCache(time.Minute, time.Now)
	cred := Credential{CredentialInfo: contract.CredentialInfo{Environment: contract.Mainnet}}
	tests := []struct{ raw, native string }{
		{"BTC", "BTCUSDT"}, {"BTC-USD-PERP", "BTCUSDT"}, {"BTC/USDT:USDT", "BTCUSDT"}, {"BTCUSDT", "BTCUSDT"},
		{"kPEPE", "1000PEPEUSDT"}, {"1000PEPE", "1000PEPEUSDT"}, {"kPEPE-USD-PERP", "1000PEPEUSDT"}, {"1000PEPE-USDT-PERP", "1000PEPEUSDT"},
		{"PEPE", ""}, {"PEPE-USDT-PERP", ""},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			m, err := c.resolve(context.Background(), a, cred, tt.raw)
			if tt.native == "" {
				if ce, _ := contract.AsError(err); err == nil || ce.Code != contract.CodeUnknownMarket {
					t.Fatalf("got %v %v, want UNKNOWN_MARKET", m, err)
				}
				return
			}
			if err != nil || m.Native != tt.native {
				t.Fatalf("got %v %v, want %s", m, err, tt.native)
			}
		})
	}
}

// TestRoundOrder: DESIGN §7. Sizes round down to the lot step; buy prices
// down and sell prices up to the tick (never worse than asked); zero, a
// size below the minimum or a value below the minimum notional is refused
// naming the rule.
func TestRoundOrder(t *testing.T) {
	d := decimal.RequireFromString
	m := Market{Canonical: "BTC-USDT-PERP", Native: "BTCUSDT", TickSize: d("0.1"), LotSize: d("0.001"), MinSize: d("0.002"), MinNotional: d("100")}
	tests := []struct {
		name                 string
		o                    OrderRequest
		size, price, trigger string
		err                  string
		exempt               bool // the venue takes reduce-only orders under the minimum notional
	}{
		{name: "buy: size and price down", o: OrderRequest{Type: Limit, Side: contract.Buy, Size: d("0.0159"), Price: d("50000.17")},
			size: "0.015", price: "50000.1"},
		{name: "sell: size down, price up", o: OrderRequest{Type: Limit, Side: contract.Sell, Size: d("0.0159"), Price: d("50000.11")},
			size: "0.015", price: "50000.2"},
		{name: "on the grid stays", o: OrderRequest{Type: Limit, Side: contract.Sell, Size: d("0.015"), Price: d("50000.1")},
			size: "0.015", price: "50000.1"},
		{name: "market order: size down", o: OrderRequest{Type: MarketType, Side: contract.Sell, Size: d("0.0159")}, size: "0.015", price: "0"},
		{name: "stop: trigger to the nearest tick", o: OrderRequest{Type: Stop, Side: contract.Sell, Size: d("0.01"), TriggerPrice: d("85000.06")},
			size: "0.01", price: "0", trigger: "85000.1"},
		{name: "size rounds to zero", o: OrderRequest{Type: Limit, Side: contract.Buy, Size: d("0.0009"), Price: d("50000")}, err: "lot step is 0.001"},
		{name: "below the minimum size", o: OrderRequest{Type: Limit, Side: contract.Buy, Size: d("0.0019"), Price: d("90000")}, err: "minimum size 0.002"},
		{name: "below the minimum notional", o: OrderRequest{Type: Limit, Side: contract.Buy, Size: d("0.002"), Price: d("49999.99")},
			err: "minimum notional 100"},
		{name: "reduce-only below the minimum notional, venue refuses it", o: OrderRequest{Type: Limit, Side: contract.Sell, Size: d("0.002"), Price: d("40000"), ReduceOnly: true},
			err: "minimum notional 100"},
		{name: "reduce-only below the minimum notional, venue takes it", exempt: true,
			o: OrderRequest{Type: Limit, Side: contract.Sell, Size: d("0.002"), Price: d("40000"), ReduceOnly: true}, size: "0.002", price: "40000"},
		{name: "buy price rounds to zero", o: OrderRequest{Type: Limit, Side: contract.Buy, Size: d("0.002"), Price: d("0.09")}, err: "tick size is 0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			o.Market = m
			o.Market.ReduceOnlyBelowMinNotional = tt.exempt
			err := roundOrder(&o)
			if tt.err != "" {
				ce, _ := contract.AsError(err)
				if err == nil || ce.Code != contract.CodeInvalidRequest || !strings.Contains(ce.Message, tt.err) {
					t.Fatalf("got %v, want INVALID_REQUEST with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Size.String() != tt.size || o.Price.String() != tt.price || (tt.trigger != "" && o.TriggerPrice.String() != tt.trigger) {
				t.Errorf("got size %s price %s trigger %s", o.Size, o.Price, o.TriggerPrice)
			}
		})
	}
}

// TestMarketResolveMemo: a spelling that matched is answered from the
// set's memo, which is bounded; a malformed symbol is INVALID_REQUEST even
// while the venue's market list cannot be fetched.
func TestMarketResolveMemo(t *testing.T) {
	a := &listingAdapter{list: []Market{testMarket("BTCUSDT", "BTC", 1, "0.1")}}
	c := newMarketCache(5*time.Minute, time.Now)
	cred := Credential{CredentialInfo: contract.CredentialInfo{Environment: contract.Mainnet}}
	ctx := context.Background()
	if _, err := c.resolve(ctx, a, cred, "btc-usd-perp"); err != nil {
		t.Fatal(err)
	}
	s := c.fresh(contract.Mainnet)
	if m, ok := s.remembered("btc-usd-perp"); !ok || m.Native != "BTCUSDT" {
		t.Fatalf("memo after a match: %+v %v", m, ok)
	}
	for i := range maxResolved + 100 {
		s.remember(strings.Repeat("x", i), Market{})
	}
	if n := len(s.resolved); n > maxResolved {
		t.Fatalf("memo holds %d spellings; bound %d", n, maxResolved)
	}

	down := &listingAdapter{err: errors.New("exchangeInfo unreachable")}
	_, err := newMarketCache(5*time.Minute, time.Now).resolve(ctx, down, cred, "!!")
	if ce, _ := contract.AsError(err); ce == nil || ce.Code != contract.CodeInvalidRequest {
		t.Fatalf("malformed symbol with the venue down: %v; want INVALID_REQUEST", err)
	}
}
