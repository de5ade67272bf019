// Package paradex is the connector adapter for Paradex perpetuals (REST v1,
// a Starknet appchain). It implements connector.Adapter: the shared runtime
// in pkg/connector resolves markets, rounds orders and keeps clientOrderId
// idempotency, and this package turns each operation into Paradex REST
// calls. Package stark hashes and signs the SNIP-12 typed data (Pedersen,
// Stark-curve ECDSA) with the account's Stark key; auth.go obtains and
// caches the JWT private calls carry; client.go sends requests and tracks
// rate limits; wire.go and convert.go translate answers; errors.go maps
// Paradex error codes.
//
// Package sim is a simulator of the same wire API on the paper engine; the
// tests run the adapter against it.
package paradex
