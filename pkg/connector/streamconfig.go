package connector

import (
	"errors"
	"fmt"
	"strconv"
)

// LoadStreamConfig reads the market-data stream settings: PERPGATE_STREAM
// ("off" serves every read from REST), PERPGATE_STREAM_PRICE_STALE_MS
// (2000), PERPGATE_STREAM_BOOK_STALE_MS (1000), PERPGATE_STREAM_IDLE_MS
// (120000), PERPGATE_STREAM_LEASE_TTL_MS (3000), and the lease bucket's
// PERPGATE_JETSTREAM_REPLICAS (1). Unset values keep the defaults.
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
	if v, ok := lookup("PERPGATE_JETSTREAM_REPLICAS"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 5 {
			errs = append(errs, fmt.Errorf("PERPGATE_JETSTREAM_REPLICAS: %q must be an integer from 1 to 5", v))
		}
		c.Replicas = n
	}
	return c, errors.Join(errs...)
}
