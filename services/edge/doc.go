// Package edge is perpgate's HTTP front door: it authenticates API keys,
// applies per-key rate limits, validates requests against the operation
// table and routes each one as a NATS request to the connector of the
// credential's exchange. It holds no secrets: key and credential metadata
// come from the keys service and are cached until a change event drops them.
package edge
