package paper

import (
	"log/slog"
	"time"

	"github.com/shopspring/decimal"
)

// Config configures an Engine. Zero fields take the defaults documented on
// each field.
type Config struct {
	// Seed drives the price walks, book sizes and synthesized history.
	Seed int64
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Markets lists the tradable markets; default DefaultMarkets().
	Markets []MarketSpec
	// MakerFeeBps is the maker fee in basis points; default 2.
	MakerFeeBps decimal.Decimal
	// TakerFeeBps is the taker fee in basis points; default 5.
	TakerFeeBps decimal.Decimal
	// StartingBalance is the wallet balance of accounts created lazily;
	// default 10000.
	StartingBalance decimal.Decimal
	// FundingInterval is the time between funding payments; default 8h.
	FundingInterval time.Duration
	// MaxLeverage caps SetLeverage and markets without their own cap;
	// default 50.
	MaxLeverage int
	// DefaultLeverage is an account's leverage on a market it never set;
	// default 10.
	DefaultLeverage int
	// Log receives what an operator should hear of (a snapshot that could
	// not be taken); default discards.
	Log *slog.Logger
}

// MarketSpec describes one perpetual market.
type MarketSpec struct {
	Symbol      string          // e.g. BTC-USD-PERP
	Base        string          // e.g. BTC
	Quote       string          // e.g. USD
	StartPrice  decimal.Decimal // first mark price
	TickSize    decimal.Decimal // price step
	LotSize     decimal.Decimal // size step
	MinNotional decimal.Decimal // smallest size·price of an order that is not reduce-only
	MaxLeverage int             // zero means Config.MaxLeverage
}

// DefaultMarkets returns BTC, ETH and SOL quoted in USD.
func DefaultMarkets() []MarketSpec {
	mk := func(base, start, tick, lot string) MarketSpec {
		return MarketSpec{
			Symbol:      base + "-USD-PERP",
			Base:        base,
			Quote:       "USD",
			StartPrice:  decimal.RequireFromString(start),
			TickSize:    decimal.RequireFromString(tick),
			LotSize:     decimal.RequireFromString(lot),
			MinNotional: decimal.NewFromInt(10),
		}
	}
	return []MarketSpec{
		mk("BTC", "60000", "0.1", "0.001"),
		mk("ETH", "3000", "0.01", "0.01"),
		mk("SOL", "150", "0.001", "0.1"),
	}
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if len(c.Markets) == 0 {
		c.Markets = DefaultMarkets()
	}
	if c.MakerFeeBps.IsZero() {
		c.MakerFeeBps = decimal.NewFromInt(2)
	}
	if c.TakerFeeBps.IsZero() {
		c.TakerFeeBps = decimal.NewFromInt(5)
	}
	if c.StartingBalance.Sign() <= 0 {
		c.StartingBalance = decimal.NewFromInt(10000)
	}
	if c.FundingInterval < time.Second {
		c.FundingInterval = 8 * time.Hour
	}
	if c.MaxLeverage <= 0 {
		c.MaxLeverage = 50
	}
	if c.DefaultLeverage <= 0 {
		c.DefaultLeverage = 10
	}
	if c.DefaultLeverage > c.MaxLeverage {
		c.DefaultLeverage = c.MaxLeverage
	}
	return c
}
