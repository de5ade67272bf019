package keys

import (
	"math/big"
	"strings"
)

// Starknet field and Stark-curve constants (Starknet docs, "Cryptography"):
// a felt is below P; a private key is a scalar in [1, N).
var (
	starkP, _ = new(big.Int).SetString("800000000000011000000000000000000000000000000000000000000000001", 16)
	starkN, _ = new(big.Int).SetString("800000000000010ffffffffffffffffb781126dcae7b2321e66a241adc64d2f", 16)
)

func hexInt(s string) *big.Int {
	n, _ := new(big.Int).SetString(strings.TrimPrefix(strings.ToLower(s), "0x"), 16)
	return n
}

// checkFelt accepts a Starknet field element (an account address).
func checkFelt(s string) string {
	if n := hexInt(s); n == nil || n.Cmp(starkP) >= 0 {
		return "must be a Starknet address: a field element below 2^251 + 17·2^192 + 1"
	}
	return ""
}

// checkStarkKey accepts a Stark-curve private key, a scalar in [1, N).
func checkStarkKey(s string) string {
	if n := hexInt(s); n == nil || n.Sign() <= 0 || n.Cmp(starkN) >= 0 {
		return "must be a Stark private key: a number from 1 to the Stark curve order minus 1"
	}
	return ""
}
