// Package sign is Aster's V3 request signing: EIP-712 typed data
// (AsterSignTransaction) over the parameter string as sent.
package sign

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"golang.org/x/crypto/sha3"
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

func keccak(parts ...[]byte) [32]byte {
	h := sha3.NewLegacyKeccak256()
	for _, p := range parts {
		h.Write(p)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

var (
	domainTypeHash  = keccak([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	messageTypeHash = keccak([]byte("Message(string msg)"))
)

// DomainSeparator is the EIP-712 domain hash for chainID.
func DomainSeparator(chainID int64) [32]byte {
	name, version := keccak([]byte("AsterSignTransaction")), keccak([]byte("1"))
	id := make([]byte, 32)
	big.NewInt(chainID).FillBytes(id)
	return keccak(domainTypeHash[:], name[:], version[:], id, make([]byte, 32))
}

// Digest is what the signer signs for msg: keccak256(0x1901 ‖ domain ‖
// keccak256(typeHash ‖ keccak256(msg))).
func Digest(msg string, chainID int64) [32]byte {
	m := keccak([]byte(msg))
	structHash := keccak(messageTypeHash[:], m[:])
	domain := DomainSeparator(chainID)
	return keccak([]byte{0x19, 0x01}, domain[:], structHash[:])
}

// Sign returns the `signature` parameter for msg: 0x ‖ r ‖ s ‖ v with v
// 27/28, lower-case hex, as eth_account and ccxt send it. RFC 6979 makes
// it deterministic.
func Sign(key *secp256k1.PrivateKey, msg string, chainID int64) string {
	d := Digest(msg, chainID)
	c := ecdsa.SignCompact(key, d[:], false) // [27+recid] ‖ r ‖ s
	out := make([]byte, 0, 65)
	out = append(append(out, c[1:]...), c[0])
	return "0x" + hex.EncodeToString(out)
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
	compact := append([]byte{b[64]}, b[:64]...)
	d := Digest(msg, chainID)
	pub, _, err := ecdsa.RecoverCompact(compact, d[:])
	if err != nil {
		return "", fmt.Errorf("recover signer: %w", err)
	}
	return Address(pub), nil
}

// ParsePrivateKey reads the API wallet key: 64 hex digits, with or
// without 0x, non-zero and below the curve order (fact sheet §2.4).
func ParsePrivateKey(s string) (*secp256k1.PrivateKey, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"))
	if err != nil || len(b) != 32 {
		return nil, errors.New("signerPrivateKey must be 64 hex digits, with or without 0x")
	}
	var k secp256k1.ModNScalar
	if overflow := k.SetByteSlice(b); overflow || k.IsZero() {
		return nil, errors.New("signerPrivateKey is not a valid secp256k1 key (zero or not below the curve order)")
	}
	return secp256k1.NewPrivateKey(&k), nil
}

// Address returns the lower-case 0x address of a public key.
func Address(pub *secp256k1.PublicKey) string {
	h := keccak(pub.SerializeUncompressed()[1:])
	return "0x" + hex.EncodeToString(h[12:])
}

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
	h := keccak([]byte(lower))
	out := []byte(lower)
	for i, c := range out {
		if c >= 'a' && (h[i/2]>>(4*(1-uint(i%2))))&0xf >= 8 {
			out[i] = c - 32
		}
	}
	return "0x" + string(out)
}
