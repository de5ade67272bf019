package hyperliquid

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"github.com/vmihailenco/msgpack/v5"
	"golang.org/x/crypto/sha3"
)

// L1 action signing (fact sheet §4.1, §4.2): connectionId =
// keccak256(msgpack(action) ‖ nonce ‖ vault flag [‖ vault] [‖ 0 ‖ expiresAfter]),
// signed as EIP-712 Agent{source, connectionId} under the "Exchange" domain.

func keccak(parts ...[]byte) [32]byte {
	h := sha3.NewLegacyKeccak256()
	for _, p := range parts {
		h.Write(p)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// PackAction returns the msgpack bytes the venue hashes: struct fields in
// declaration order, integers in their smallest encoding (Python
// msgpack.packb's choice; vmihailenco's default would write uint64 as 9
// bytes and change the hash).
func PackAction(action any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(action); err != nil {
		return nil, fmt.Errorf("msgpack action: %w", err)
	}
	return buf.Bytes(), nil
}

// ActionHash returns the connectionId of an action. vault is the 20-byte
// vault or sub-account address, nil when trading for the account itself;
// expiresAfter is nil when unused.
func ActionHash(action any, nonce uint64, vault []byte, expiresAfter *uint64) ([32]byte, error) {
	data, err := PackAction(action)
	if err != nil {
		return [32]byte{}, err
	}
	data = binary.BigEndian.AppendUint64(data, nonce)
	if vault == nil {
		data = append(data, 0)
	} else {
		if len(vault) != 20 {
			return [32]byte{}, fmt.Errorf("vault address has %d bytes, want 20", len(vault))
		}
		data = append(data, 1)
		data = append(data, vault...)
	}
	if expiresAfter != nil {
		data = append(data, 0)
		data = binary.BigEndian.AppendUint64(data, *expiresAfter)
	}
	return keccak(data), nil
}

var (
	// domainSeparator is EIP-712 {name "Exchange", version "1", chainId
	// 1337, verifyingContract 0x0}, constant for L1 actions.
	domainSeparator = func() [32]byte {
		typeHash := keccak([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
		name, version := keccak([]byte("Exchange")), keccak([]byte("1"))
		chainID := make([]byte, 32)
		big.NewInt(1337).FillBytes(chainID)
		return keccak(typeHash[:], name[:], version[:], chainID, make([]byte, 32))
	}()
	agentTypeHash = keccak([]byte("Agent(string source,bytes32 connectionId)"))
)

// AgentDigest is the EIP-712 digest an agent signs for connectionId:
// source "a" on mainnet, "b" on testnet.
func AgentDigest(connectionID [32]byte, mainnet bool) [32]byte {
	source := "b"
	if mainnet {
		source = "a"
	}
	src := keccak([]byte(source))
	structHash := keccak(agentTypeHash[:], src[:], connectionID[:])
	return keccak([]byte{0x19, 0x01}, domainSeparator[:], structHash[:])
}

// ParsePrivateKey reads a 32-byte secp256k1 key in hex, with or without
// 0x. It refuses zero and keys not below the curve order.
func ParsePrivateKey(s string) (*secp256k1.PrivateKey, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"))
	if err != nil || len(b) != 32 {
		return nil, errors.New("agent private key must be 64 hex characters")
	}
	var k secp256k1.ModNScalar
	if overflow := k.SetByteSlice(b); overflow || k.IsZero() {
		return nil, errors.New("agent private key is not a valid secp256k1 key")
	}
	return secp256k1.NewPrivateKey(&k), nil
}

// Address returns the lowercase 0x address of a public key.
func Address(pub *secp256k1.PublicKey) string {
	h := keccak(pub.SerializeUncompressed()[1:])
	return "0x" + hex.EncodeToString(h[12:])
}

// SignL1 signs an action hash as the agent. Signing is RFC 6979
// deterministic, so the same inputs give the same {r, s, v}.
func SignL1(key *secp256k1.PrivateKey, connectionID [32]byte, mainnet bool) Signature {
	digest := AgentDigest(connectionID, mainnet)
	sig := ecdsa.SignCompact(key, digest[:], false) // [27+recid] ‖ r ‖ s
	return Signature{
		R: "0x" + hex.EncodeToString(sig[1:33]),
		S: "0x" + hex.EncodeToString(sig[33:65]),
		V: int(sig[0]),
	}
}

// RecoverL1 returns the lowercase address that signed connectionId for
// the given network. r and s may have fewer than 64 hex digits (Python's
// to_hex drops leading zeros).
func RecoverL1(connectionID [32]byte, mainnet bool, sig Signature) (string, error) {
	if sig.V != 27 && sig.V != 28 {
		return "", fmt.Errorf("signature v must be 27 or 28, got %d", sig.V)
	}
	compact := make([]byte, 65)
	compact[0] = byte(sig.V)
	for i, part := range []string{sig.R, sig.S} {
		n, ok := new(big.Int).SetString(strings.TrimPrefix(strings.TrimPrefix(part, "0x"), "0X"), 16)
		if !ok || n.Sign() <= 0 || n.BitLen() > 256 {
			return "", errors.New("signature r and s must be hex numbers of at most 32 bytes")
		}
		n.FillBytes(compact[1+32*i : 33+32*i])
	}
	digest := AgentDigest(connectionID, mainnet)
	pub, _, err := ecdsa.RecoverCompact(compact, digest[:])
	if err != nil {
		return "", fmt.Errorf("recover signer: %w", err)
	}
	return Address(pub), nil
}

// ParseAddress reads a 0x address (any case; the prefix may be missing, as
// ccxt sends vault addresses) into its 20 bytes.
func ParseAddress(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"))
	if err != nil || len(b) != 20 {
		return nil, fmt.Errorf("address %q is not 20 bytes of hex", s)
	}
	return b, nil
}
