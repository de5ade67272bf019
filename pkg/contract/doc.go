// Package contract is the single source of truth for perpgate's public API:
// the table of the 20 operations (name, group, minimum tier, parameter and
// result types), the error codes with their HTTP statuses, the NATS subjects
// every service talks on, and the wire rules (decimals as strings, Unix
// seconds). Edge validation, connector routing, MCP tools and docs are all
// derived from this package; nothing else lists operations by hand.
package contract
