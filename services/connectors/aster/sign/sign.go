// Package sign is Aster's V3 request signing: EIP-712 typed data
// (AsterSignTransaction) over the parameter string as sent.
package sign

import (
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/perpgate/perpgate/pkg/connector/venuekit/evm"
)

// V3 request signing (fact sheet §2.2): the API wallet signs the exact
// parameter string sent, as EIP-712 typed data Message{msg} under the
// domain {name "AsterSignTransaction", version "1", chainId, 0x0}.
// https://github.com/asterdex/api-docs/blob/master/V3(Recommended)/EN/aster-finance-futures-api-v3.md

// Chain ids of the EIP-712 domain: the environment changes the signature,
// not only the host (fact sheet §0 #4).
const (
	MainnetChainID = 1666
	TestnetChainID = 714
)

var messageTypeHash = evm.Keccak([]byte("Message(string msg)"))

// DomainSeparator is the EIP-712 domain hash for chainID.
func DomainSeparator(chainID int64) [32]byte {
	return evm.Domain("AsterSignTransaction", "1", chainID)
}

// Digest is what the signer signs for msg: keccak256(0x1901 ‖ domain ‖
// keccak256(typeHash ‖ keccak256(msg))).
func Digest(msg string, chainID int64) [32]byte {
	m := evm.Keccak([]byte(msg))
	return evm.Digest(DomainSeparator(chainID), evm.Keccak(messageTypeHash[:], m[:]))
}

// Sign returns the `signature` parameter for msg: 0x ‖ r ‖ s ‖ v with v
// 27/28, lower-case hex, as eth_account and ccxt send it. RFC 6979 makes
// it deterministic.
func Sign(key *secp256k1.PrivateKey, msg string, chainID int64) string {
	r, s, v := evm.Sign(key, Digest(msg, chainID))
	return fmt.Sprintf("%s%s%02x", r, s[2:], v)
}

// Recover returns the lower-case address that produced sig over msg.
func Recover(msg, sig string, chainID int64) (string, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(sig, "0x"))
	if err != nil || len(b) != 65 {
		return "", errors.New("signature must be 0x and 65 bytes of hex")
	}
	if b[64] != 27 && b[64] != 28 {
		return "", fmt.Errorf("signature v must be 27 or 28, got %d", b[64])
	}
	return evm.Recover(Digest(msg, chainID), append([]byte{b[64]}, b[:64]...))
}

// ParsePrivateKey reads the API wallet key: 64 hex digits, with or
// without 0x, non-zero and below the curve order (fact sheet §2.4).
func ParsePrivateKey(s string) (*secp256k1.PrivateKey, error) {
	return evm.ParseKey("signerPrivateKey", s)
}

// Address returns the lower-case 0x address of a public key.
func Address(pub *secp256k1.PublicKey) string { return evm.Address(pub) }

var addressPattern = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// CheckAddress accepts 0x and 40 hex digits; a mixed-case address must
// pass its EIP-55 checksum (a typo in it would otherwise go unnoticed).
func CheckAddress(s string) error {
	if !addressPattern.MatchString(s) {
		return errors.New("userAddress must be 0x followed by 40 hex digits")
	}
	hexPart := s[2:]
	if hexPart == strings.ToLower(hexPart) || hexPart == strings.ToUpper(hexPart) {
		return nil
	}
	if ChecksumAddress(s) != s {
		return errors.New("userAddress fails its EIP-55 checksum (mixed case that does not match): check it for typos or send it in lower case")
	}
	return nil
}

// ChecksumAddress writes an address in EIP-55 mixed case.
func ChecksumAddress(s string) string {
	lower := strings.ToLower(strings.TrimPrefix(s, "0x"))
	h := evm.Keccak([]byte(lower))
	out := []byte(lower)
	for i, c := range out {
		if c >= 'a' && (h[i/2]>>(4*(1-uint(i%2))))&0xf >= 8 {
			out[i] = c - 32
		}
	}
	return "0x" + string(out)
}
