package keys

import (
	"encoding/hex"
	"math/big"
	"strings"

	"golang.org/x/crypto/sha3"
)

// secp256k1N is the order of the secp256k1 group: a private key is an
// integer in [1, N-1].
var secp256k1N, _ = new(big.Int).SetString("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141", 16)

// checkEVMAddress accepts an all-lowercase (or all-uppercase) hex address,
// or a mixed-case one whose case is its EIP-55 checksum. A mixed-case
// address with a wrong checksum is almost always a typo.
func checkEVMAddress(s string) string {
	hexPart := strings.TrimPrefix(s, "0x")
	lower := strings.ToLower(hexPart)
	if hexPart == lower || hexPart == strings.ToUpper(hexPart) {
		return ""
	}
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(lower))
	sum := h.Sum(nil)
	for i, c := range hexPart {
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		upper := c >= 'A' && c <= 'F'
		lowerLetter := c >= 'a' && c <= 'f'
		if (nibble >= 8 && lowerLetter) || (nibble < 8 && upper) {
			return "must be a checksummed (EIP-55) or lowercase 0x address"
		}
	}
	return ""
}

// checkSecp256k1Key accepts a 32-byte hex integer in [1, N-1].
func checkSecp256k1Key(s string) string {
	b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
	if err != nil || len(b) != 32 {
		return "must be 64 hex characters, optionally prefixed by 0x"
	}
	k := new(big.Int).SetBytes(b)
	if k.Sign() == 0 || k.Cmp(secp256k1N) >= 0 {
		return "is not a valid secp256k1 private key"
	}
	return ""
}
