// Package venuekit is what every venue connector is built on, so that a
// connector is only its venue's signer, wire types, conversions and
// adapter:
//
//   - REST and Env: the settings every REST venue has (per-environment base
//     URLs, timeout, clock) and a loader that gathers every problem.
//   - HTTP: one bounded round trip (body limit, transport errors as
//     UPSTREAM_UNAVAILABLE without the signed URL, request recording for
//     tests); Hosts keeps per-base state such as the venue's clock.
//   - Budgets: Pace (wait or answer rate-limited before the deadline), Ban
//     (IP back-off), Quotas (per-endpoint budgets from response headers),
//     WeightGate (a per-minute weight budget from a used-weight header).
//   - Socket: the connector side of a venue websocket (dial, keepalive,
//     bounded writes, close once).
//   - Nonces and RedisNonces: nonce counters, per process or shared.
//
// Numbers that arrive as strings or numbers are connector.Decimal,
// connector.Int and connector.Text.
package venuekit
