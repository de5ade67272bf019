// Package binance is the connector adapter for Binance USDⓈ-M Futures
// (USDT-margined perpetuals on fapi). It implements connector.Adapter: the
// shared runtime in pkg/connector resolves markets, rounds orders and keeps
// clientOrderId idempotency, package fapi holds the operations Binance
// shares with Aster, and this package adds Binance's own: its signing
// (client.go), the algo service's conditional orders (orders.go, wire.go,
// convert.go), open interest and its error codes (errors.go). The facts it relies on are in shared/exchanges/binance.md.
//
// Package sim is a simulator of the same wire API on the paper engine; the
// tests run the adapter against it.
package binance
