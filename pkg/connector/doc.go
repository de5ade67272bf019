// Package connector is the runtime every exchange connector shares: NATS
// micro registration (one service per exchange, a group per operation
// family, an endpoint per operation), request decoding, deadlines,
// credential-secret fetch and cache, market resolution and rounding,
// clientOrderId idempotency and error mapping. An exchange plugs in as an
// Adapter, which implements the 20 operations against its venue and never
// touches NATS.
package connector
