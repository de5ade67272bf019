package hyperliquid

import "github.com/perpgate/perpgate/pkg/connector/venuekit"

// The nonce counters are the kit's (fact sheet §4.4: an atomic counter per
// signer, fast-forwarded to the current Unix milliseconds).
type (
	NonceSource = venuekit.NonceSource
	Nonces      = venuekit.Nonces
	RedisNonces = venuekit.RedisNonces
)

var (
	NewNonces      = venuekit.NewNonces
	NewRedisNonces = venuekit.NewRedisNonces
)
