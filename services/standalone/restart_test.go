package standalone

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPaperStateSurvivesRestart: orders, positions, balance and the order
// id sequence of the paper exchange, and the idempotency records, are the
// same after `perpgate serve` restarts on its data dir.
func TestPaperStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, func(c *Config) { c.DataDir = dir })
	g.ok(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.01"})
	resting := g.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
		"price": "50000", "clientOrderId": "survives-1"})
	before := map[string]any{
		"balance":   g.ok(map[string]any{"operation": "getBalance"}),
		"positions": g.ok(map[string]any{"operation": "getPositions"})["positions"],
		"orders":    g.ok(map[string]any{"operation": "getOrders"})["orders"],
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	again := startGateway(t, func(c *Config) { c.DataDir = dir })
	after := map[string]any{
		"balance":   again.ok(map[string]any{"operation": "getBalance"}),
		"positions": again.ok(map[string]any{"operation": "getPositions"})["positions"],
		"orders":    again.ok(map[string]any{"operation": "getOrders"})["orders"],
	}
	for k := range before {
		if mustJSONString(before[k]) != mustJSONString(after[k]) && k != "balance" && k != "positions" {
			t.Errorf("%s changed across the restart:\nbefore %s\nafter  %s", k, mustJSONString(before[k]), mustJSONString(after[k]))
		}
	}
	b1, b2 := before["balance"].(map[string]any), after["balance"].(map[string]any)
	if b1["freeCollateral"] == nil || b2["exchange_type"] != "paper" {
		t.Fatalf("balances: %v %v", b1, b2)
	}
	p1, p2 := before["positions"].([]any), after["positions"].([]any)
	if len(p1) != 1 || len(p2) != 1 || p1[0].(map[string]any)["size"] != p2[0].(map[string]any)["size"] ||
		p1[0].(map[string]any)["entryPrice"] != p2[0].(map[string]any)["entryPrice"] {
		t.Fatalf("positions: before %v after %v", p1, p2)
	}
	// The repeat answers the first order; a new order gets a new id.
	repeat := again.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
		"price": "50000", "clientOrderId": "survives-1"})
	if repeat["orderId"] != resting["orderId"] {
		t.Fatalf("repeat after restart answered %v, first was %v", repeat["orderId"], resting["orderId"])
	}
	next := again.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "50000"})
	if next["orderId"].(string) <= resting["orderId"].(string) {
		t.Fatalf("order id %v after restart does not follow %v", next["orderId"], resting["orderId"])
	}
}

// TestPaperPlacementSurvivesALostIdempotencyLog: a paper placement waits
// for the journal alone, which holds its idempotency claim and result, so
// a crash that took the idempotency log's latest lines (never waited for
// on that path) still leaves the repeat answering the first order, and
// one order at the venue.
func TestPaperPlacementSurvivesALostIdempotencyLog(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, func(c *Config) { c.DataDir = dir })
	first := g.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
		"price": "50000", "clientOrderId": "lost-log-1"})
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "idempotency.log"), 0); err != nil {
		t.Fatal(err)
	}
	again := startGateway(t, func(c *Config) { c.DataDir = dir })
	repeat := again.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
		"price": "50000", "clientOrderId": "lost-log-1"})
	if repeat["orderId"] != first["orderId"] {
		t.Fatalf("repeat after the crash answered %v, first was %v", repeat["orderId"], first["orderId"])
	}
	if orders := again.ok(map[string]any{"operation": "getOrders"})["orders"].([]any); len(orders) != 1 {
		t.Fatalf("%d orders at the venue, want 1: %v", len(orders), orders)
	}
}
