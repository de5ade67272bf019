// Package okx is the connector adapter for OKX v5 USDT-margined perpetual
// swaps (instType SWAP, -USDT-SWAP instruments). It implements
// connector.Adapter: the shared runtime in pkg/connector resolves markets,
// rounds orders and keeps clientOrderId idempotency, and this package turns
// each operation into OKX REST calls (client.go signs them and unwraps the
// {code,msg,data} envelope), converts sizes between OKX contracts and base
// units with ctVal (convert.go), and maps OKX error codes to reasons
// (errors.go).
//
// Package sim is a simulator of the same wire API on the paper engine; the
// tests run the adapter against it.
package okx
