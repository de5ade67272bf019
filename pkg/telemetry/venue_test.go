package telemetry

import "testing"

func TestEndpointBoundsIDs(t *testing.T) {
	for path, want := range map[string]string{
		"/fapi/v1/premiumIndex":                       "GET /fapi/v1/premiumIndex",
		"/api/v5/public/mark-price":                   "GET /api/v5/public/mark-price",
		"/v1/accounts/0199e2b4-77aa/orders/100000017": "GET /v1/accounts/{id}/orders/{id}",
		"/v1/markets/BTC-USD-PERP/mark":               "GET /v1/markets/BTC-USD-PERP/mark",
		"/v1/markets/1000PEPE-USD-PERP/book":          "GET /v1/markets/{id}/book",
	} {
		if got := Endpoint("GET", path); got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", path, got, want)
		}
	}
}
