// Package hyperliquid is the connector adapter for Hyperliquid perpetuals:
// the 20 gateway operations mapped onto Hyperliquid's /info reads and
// signed /exchange actions (shared/exchanges/hyperliquid.md).
//
// Reads use the credential's account address (or its vault); actions are
// signed by the agent key as EIP-712 "Agent" messages over a msgpack hash
// (sign.go). Mainnet or testnet comes from the credential's environment,
// never from the URL. The simulator in sim serves the same wire API on the
// paper engine for tests.
package hyperliquid
