// Package aster is the connector adapter for Aster's perpetual futures
// (the V3 "Pro API" on fapi, USDT-margined). It implements
// connector.Adapter: the shared runtime in pkg/connector resolves markets,
// rounds orders and keeps clientOrderId idempotency, and this package
// turns each operation into Aster REST calls. Aster's REST API has
// Binance USDⓈ-M's shapes, so the operations are package fapi's, but a
// request is authorised by an EIP-712 signature of the account's API
// wallet over the parameter string as sent, with a microsecond nonce per
// signer (package sign, client.go). Conditional orders are ordinary
// orders with stopPrice; the listen-key user data stream feeds account
// events (stream.go).
//
// Package sim is a simulator of the same wire API on the paper engine; the
// tests run the adapter against it.
package aster
