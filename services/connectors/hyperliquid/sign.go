package hyperliquid

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/perpgate/perpgate/pkg/connector/venuekit/evm"
	"github.com/vmihailenco/msgpack/v5"
)

// L1 action signing (fact sheet §4.1, §4.2): connectionId =
// keccak256(msgpack(action) ‖ nonce ‖ vault flag [‖ vault] [‖ 0 ‖ expiresAfter]),
// signed as EIP-712 Agent{source, connectionId} under the "Exchange" domain.

var keccak = evm.Keccak

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
	domainSeparator = evm.Domain("Exchange", "1", 1337)
	agentTypeHash   = keccak([]byte("Agent(string source,bytes32 connectionId)"))
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
	return evm.Digest(domainSeparator, structHash)
}

// ParsePrivateKey reads a 32-byte secp256k1 key in hex, with or without
// 0x. It refuses zero and keys not below the curve order.
func ParsePrivateKey(s string) (*secp256k1.PrivateKey, error) {
	return evm.ParseKey("agent private key", s)
}

var (
	// Address returns the lowercase 0x address of a public key.
	Address = evm.Address
	// ParseAddress reads a 0x address (any case; the prefix may be missing,
	// as ccxt sends vault addresses) into its 20 bytes.
	ParseAddress = evm.ParseAddress
)

// SignL1 signs an action hash as the agent. Signing is RFC 6979
// deterministic, so the same inputs give the same {r, s, v}.
func SignL1(key *secp256k1.PrivateKey, connectionID [32]byte, mainnet bool) Signature {
	r, s, v := evm.Sign(key, AgentDigest(connectionID, mainnet))
	return Signature{R: r, S: s, V: v}
}

// RecoverL1 returns the lowercase address that signed connectionId for
// the given network. r and s may have fewer than 64 hex digits (Python's
// to_hex drops leading zeros).
func RecoverL1(connectionID [32]byte, mainnet bool, sig Signature) (string, error) {
	return evm.RecoverRS(AgentDigest(connectionID, mainnet), sig.R, sig.S, sig.V)
}
