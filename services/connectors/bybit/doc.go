// Package bybit is the connector adapter for Bybit v5 USDT perpetuals
// (category=linear). It implements connector.Adapter: the shared runtime
// in pkg/connector resolves markets, rounds orders and keeps clientOrderId
// idempotency, and this package turns each operation into Bybit REST calls
// (client.go signs them with the X-BAPI-* headers), converts the answers
// (wire.go, convert.go) and maps Bybit retCodes to reasons (errors.go).
//
// Package sim is a simulator of the same wire API on the paper engine; the
// tests run the adapter against it.
package bybit
