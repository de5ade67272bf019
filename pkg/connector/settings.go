package connector

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// CheckBaseURL reports a venue REST base that is not an http(s) URL,
// naming the setting that carries it and a good example.
func CheckBaseURL(setting, what, value, example string) error {
	p, err := url.Parse(value)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("%s: the %s %q must be an http(s) URL such as %s", setting, what, value, example)
	}
	return nil
}

// Millis reads a setting given in whole milliseconds.
func Millis(setting, value string) (time.Duration, error) {
	n, err := strconv.Atoi(value)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number of milliseconds", setting, value)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// CheckRecvWindow reports a receive window outside 1 ms to 60 s, the range
// the CEX venues accept for how long a signed request stays valid.
func CheckRecvWindow(setting string, d time.Duration) error {
	if d < time.Millisecond || d > time.Minute {
		return errors.New(setting + " must be 1 to 60000 milliseconds")
	}
	return nil
}

// GuardConfig tunes how the key guards value orders (DESIGN §13).
type GuardConfig struct {
	// MarketSlippageBps moves orders that execute at market (market
	// orders, triggered stops) further from the mark when they are valued:
	// PERPGATE_MARKET_SLIPPAGE_BPS, default 50.
	MarketSlippageBps decimal.Decimal
}

// DefaultMarketSlippageBps is PERPGATE_MARKET_SLIPPAGE_BPS when unset.
const DefaultMarketSlippageBps = 50

// maxSlippageBps bounds PERPGATE_MARKET_SLIPPAGE_BPS: 100 %.
const maxSlippageBps = 10_000

// DefaultGuardConfig is the guard settings when none are given.
func DefaultGuardConfig() GuardConfig {
	return GuardConfig{MarketSlippageBps: decimal.NewFromInt(DefaultMarketSlippageBps)}
}

// LoadGuardConfig reads PERPGATE_MARKET_SLIPPAGE_BPS (basis points, 0 to
// 10000; default 50).
func LoadGuardConfig(lookup func(string) (string, bool)) (GuardConfig, error) {
	c := DefaultGuardConfig()
	v, ok := lookup("PERPGATE_MARKET_SLIPPAGE_BPS")
	if !ok || v == "" {
		return c, nil
	}
	bps, err := decimal.NewFromString(v)
	if err != nil || bps.IsNegative() || bps.GreaterThan(decimal.NewFromInt(maxSlippageBps)) {
		return c, fmt.Errorf("PERPGATE_MARKET_SLIPPAGE_BPS: %q must be basis points from 0 to %d, such as 50 (0.5 %%)", v, maxSlippageBps)
	}
	c.MarketSlippageBps = bps
	return c, nil
}
