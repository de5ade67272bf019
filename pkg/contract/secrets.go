package contract

// SecretFields are the fields of each exchange's credential secret (the
// JSON object `credential create` stores), required ones first; an
// optional one ends in "?". The keys service's validation is the
// authority, and a test keeps the two equal.
var SecretFields = map[Exchange][]string{
	Hyperliquid: {"accountAddress", "agentPrivateKey", "vaultAddress?"},
	Paradex:     {"accountAddress", "starkPrivateKey"},
	Binance:     {"apiKey", "apiSecret"},
	Bybit:       {"apiKey", "apiSecret", "demo?"},
	OKX:         {"apiKey", "apiSecret", "passphrase"},
	Aster:       {"userAddress", "signerPrivateKey"},
	Paper:       {"startingBalance?"},
}
