package connector

import (
	"errors"
	"fmt"
)

// LoadStreamConfig reads the market-data stream settings: PERPGATE_STREAM
// ("off" serves every read from REST), PERPGATE_STREAM_PRICE_STALE_MS
// (2000), PERPGATE_STREAM_BOOK_STALE_MS (1000), PERPGATE_STREAM_IDLE_MS
// (120000), PERPGATE_STREAM_LEASE_TTL_MS (3000). Unset values keep the
// defaults.
func LoadStreamConfig(lookup func(string) (string, bool)) (StreamConfig, error) {
	var c StreamConfig
	var errs []error
	if v, ok := lookup("PERPGATE_STREAM"); ok && v != "" {
		switch v {
		case "off":
			c.Disabled = true
		case "on":
		default:
			errs = append(errs, fmt.Errorf("PERPGATE_STREAM: %q must be on or off", v))
		}
	}
	for name, d := range map[string]*int64{
		"PERPGATE_STREAM_PRICE_STALE_MS": (*int64)(&c.PriceStale),
		"PERPGATE_STREAM_BOOK_STALE_MS":  (*int64)(&c.BookStale),
		"PERPGATE_STREAM_IDLE_MS":        (*int64)(&c.Idle),
		"PERPGATE_STREAM_LEASE_TTL_MS":   (*int64)(&c.LeaseTTL),
	} {
		v, ok := lookup(name)
		if !ok || v == "" {
			continue
		}
		ms, err := Millis(name, v)
		if err == nil && ms <= 0 {
			err = errors.New(name + " must be positive")
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*d = int64(ms)
	}
	return c, errors.Join(errs...)
}
