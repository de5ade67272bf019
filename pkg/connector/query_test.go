package connector

import "testing"

func TestQueryKeepsOrder(t *testing.T) {
	q := Query{}.Add("symbol", "BTCUSDT").Add("a", "x y&z").Add("category", "linear")
	if got := q.Encode(); got != "symbol=BTCUSDT&a=x+y%26z&category=linear" {
		t.Fatalf("Encode = %q", got)
	}
	if (Query{}).Encode() != "" {
		t.Fatal("empty query not empty")
	}
}
