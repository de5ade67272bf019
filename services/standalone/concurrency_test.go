package standalone

import (
	"net/http"
	"sync"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
)

// TestConcurrentAnswers sends successes and connector-side failures at once
// and checks that each request gets its own answer while the connector's
// workers answer in parallel.
func TestConcurrentAnswers(t *testing.T) {
	g := startGateway(t, func(c *Config) {
		c.Edge.TierLimits[contract.TierBuilder] = contract.TierLimits{PerMinute: 10000, PerDay: 10000}
	})
	key := g.Bootstrap().APIKey
	bodies := []map[string]any{
		{"operation": "getMarkPrice", "market": "BTC"},
		{"operation": "getMarkPrice", "market": "NOSUCHCOIN"},                                               // UNKNOWN_MARKET from the connector
		{"operation": "cancelOrder", "market": "BTC", "orderId": "999999999"},                               // ORDER_NOT_FOUND from the venue
		{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.00001", "price": "100"}, // INVALID_REQUEST: rounds to zero
	}
	want := []int{http.StatusOK, http.StatusBadRequest, http.StatusBadGateway, http.StatusBadRequest}
	const rounds = 40
	var wg sync.WaitGroup
	for i := range rounds * len(bodies) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := map[string]any{}
			for k, v := range bodies[i%len(bodies)] {
				body[k] = v
			}
			if r := g.call(key, body); r.status != want[i%len(bodies)] {
				t.Errorf("%v: %d %s", body["operation"], r.status, r.raw)
			}
		}()
	}
	wg.Wait()
}
