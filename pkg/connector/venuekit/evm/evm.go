// Package evm is what venues that sign with an Ethereum key share:
// keccak256, the EIP-712 domain and digest, secp256k1 keys and 0x
// addresses. Each venue keeps its own typed data.
package evm

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"golang.org/x/crypto/sha3"
)

// Keccak is keccak256 of the parts, one after the other.
func Keccak(parts ...[]byte) [32]byte {
	h := sha3.NewLegacyKeccak256()
	for _, p := range parts {
		h.Write(p)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

var domainTypeHash = Keccak([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))

// Domain is the EIP-712 domain separator of {name, version, chainId,
// verifyingContract 0x0}.
func Domain(name, version string, chainID int64) [32]byte {
	n, v := Keccak([]byte(name)), Keccak([]byte(version))
	id := make([]byte, 32)
	big.NewInt(chainID).FillBytes(id)
	return Keccak(domainTypeHash[:], n[:], v[:], id, make([]byte, 32))
}

// Digest is what a key signs for typed data: keccak256(0x1901 ‖ domain ‖
// structHash).
func Digest(domain, structHash [32]byte) [32]byte {
	return Keccak([]byte{0x19, 0x01}, domain[:], structHash[:])
}

// ParseKey reads a 32-byte secp256k1 key in hex, with or without 0x. It
// refuses zero and keys not below the curve order; errors start with
// name, never the key.
func ParseKey(name, s string) (*secp256k1.PrivateKey, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"))
	if err != nil || len(b) != 32 {
		return nil, errors.New(name + " must be 64 hex characters")
	}
	var k secp256k1.ModNScalar
	if overflow := k.SetByteSlice(b); overflow || k.IsZero() {
		return nil, errors.New(name + " is not a valid secp256k1 key")
	}
	return secp256k1.NewPrivateKey(&k), nil
}

// Address is the lowercase 0x address of a public key.
func Address(pub *secp256k1.PublicKey) string {
	h := Keccak(pub.SerializeUncompressed()[1:])
	return "0x" + hex.EncodeToString(h[12:])
}

// ParseAddress reads a 0x address (any case; the prefix may be missing)
// into its 20 bytes.
func ParseAddress(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"))
	if err != nil || len(b) != 20 {
		return nil, fmt.Errorf("address %q is not 20 bytes of hex", s)
	}
	return b, nil
}

// Recover is the address that signed digest; compact is [v] ‖ r ‖ s
// with v 27 or 28.
func Recover(digest [32]byte, compact []byte) (string, error) {
	pub, _, err := ecdsa.RecoverCompact(compact, digest[:])
	if err != nil {
		return "", fmt.Errorf("recover signer: %w", err)
	}
	return Address(pub), nil
}

// Sign signs digest with key as {r, s, v}: 0x-prefixed 32-byte hex and
// 27 or 28. Signing is RFC 6979 deterministic.
func Sign(key *secp256k1.PrivateKey, digest [32]byte) (r, s string, v int) {
	sig := ecdsa.SignCompact(key, digest[:], false) // [27+recid] ‖ r ‖ s
	return "0x" + hex.EncodeToString(sig[1:33]), "0x" + hex.EncodeToString(sig[33:65]), int(sig[0])
}

// RecoverRS is the address that signed digest as {r, s, v}; r and s may
// have fewer than 64 hex digits (Python's to_hex drops leading zeros).
func RecoverRS(digest [32]byte, r, s string, v int) (string, error) {
	if v != 27 && v != 28 {
		return "", fmt.Errorf("signature v must be 27 or 28, got %d", v)
	}
	compact := make([]byte, 65)
	compact[0] = byte(v)
	for i, part := range []string{r, s} {
		n, ok := new(big.Int).SetString(strings.TrimPrefix(strings.TrimPrefix(part, "0x"), "0X"), 16)
		if !ok || n.Sign() <= 0 || n.BitLen() > 256 {
			return "", errors.New("signature r and s must be hex numbers of at most 32 bytes")
		}
		n.FillBytes(compact[1+32*i : 33+32*i])
	}
	return Recover(digest, compact)
}
