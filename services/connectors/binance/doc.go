// Package binance is the connector adapter for Binance USDⓈ-M Futures
// (USDT-margined perpetuals on fapi). It implements connector.Adapter: the
// shared runtime in pkg/connector resolves markets, rounds orders and keeps
// clientOrderId idempotency, and this package turns each operation into
// Binance REST calls (client.go signs them), converts the answers
// (wire.go, convert.go) and maps Binance error codes to reasons
// (errors.go). The facts it relies on are in shared/exchanges/binance.md.
//
// Package sim is a simulator of the same wire API on the paper engine; the
// tests run the adapter against it.
package binance
