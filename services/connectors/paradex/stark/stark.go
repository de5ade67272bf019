// Package stark hashes and signs Paradex messages: SNIP-12 revision 0
// typed data (StarkNetDomain, Pedersen hashing over felts) signed with
// Stark-curve ECDSA, for POST /v1/auth and for orders. The connector signs
// with it and its simulator verifies with it.
package stark

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	starkcurve "github.com/consensys/gnark-crypto/ecc/stark-curve"
	"github.com/consensys/gnark-crypto/ecc/stark-curve/ecdsa"
	"github.com/consensys/gnark-crypto/ecc/stark-curve/fp"
	"golang.org/x/crypto/sha3"
)

// Chain ids (short strings). The connector reads the live one from
// /system/config; these are the fallbacks and the simulator's defaults.
const (
	ChainMainnet = "PRIVATE_SN_PARACLEAR_MAINNET"
	ChainTestnet = "PRIVATE_SN_POTC_SEPOLIA"
)

var (
	two251  = new(big.Int).Lsh(big.NewInt(1), 251)
	ecOrder = mustBig("0800000000000010ffffffffffffffffb781126dcae7b2321e66a241adc64d2f")
	// Starknet contract addresses are taken mod 2^251 - 256.
	addrBound = new(big.Int).Sub(two251, big.NewInt(256))

	typeHashDomain  = starknetKeccak("StarkNetDomain(name:felt,chainId:felt,version:felt)")
	typeHashRequest = starknetKeccak("Request(method:felt,path:felt,body:felt,timestamp:felt,expiration:felt)")
	typeHashOrder   = starknetKeccak("Order(timestamp:felt,market:felt,side:felt,orderType:felt,size:felt,price:felt)")
	starknetMessage = shortString("StarkNet Message")
)

func mustBig(hex string) *big.Int {
	v, ok := new(big.Int).SetString(hex, 16)
	if !ok {
		panic("bad constant " + hex)
	}
	return v
}

// starknetKeccak is keccak256 masked to 250 bits.
func starknetKeccak(s string) *big.Int {
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(s))
	v := new(big.Int).SetBytes(h.Sum(nil))
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 250), big.NewInt(1))
	return v.And(v, mask)
}

// shortString encodes up to 31 ASCII bytes big-endian, as Cairo does.
func shortString(s string) *big.Int {
	return new(big.Int).SetBytes([]byte(s))
}

// ParseFelt reads a felt written as 0x-hex or decimal; it must be below 2^251.
func ParseFelt(s string) (*big.Int, error) {
	s = strings.TrimSpace(s)
	var v *big.Int
	var ok bool
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		if len(s) == 2 {
			return nil, errors.New("empty hex")
		}
		v, ok = new(big.Int).SetString(s[2:], 16)
	} else {
		v, ok = new(big.Int).SetString(s, 10)
	}
	if !ok || v.Sign() < 0 {
		return nil, errors.New("not a hex or decimal number")
	}
	if v.Cmp(two251) >= 0 {
		return nil, errors.New("does not fit a felt (must be below 2^251)")
	}
	return v, nil
}

// HexFelt is the 0x lowercase form without zero padding (paradex-py hex()).
func HexFelt(v *big.Int) string { return "0x" + v.Text(16) }

// hashOnElements is Starknet's compute_hash_on_elements.
func hashOnElements(xs ...*big.Int) *big.Int {
	els := make([]*fp.Element, len(xs))
	for i, x := range xs {
		els[i] = new(fp.Element).SetBigInt(x)
	}
	h := pedersenArray(els...)
	var out big.Int
	h.BigInt(&out)
	return &out
}

func domainHash(chainID string) *big.Int {
	// version "1" is the integer 1 (all-digit strings parse as decimal).
	return hashOnElements(typeHashDomain, shortString("Paradex"), shortString(chainID), big.NewInt(1))
}

func messageHash(chainID string, account, structHash *big.Int) *big.Int {
	return hashOnElements(starknetMessage, domainHash(chainID), account, structHash)
}

// AuthHash is the hash signed for POST /v1/auth; timestamps are seconds and
// the path is always /v1/auth, also when posting to /v1/auth/{public key}.
func AuthHash(chainID string, account *big.Int, tsSec, expSec int64) *big.Int {
	sh := hashOnElements(typeHashRequest, shortString("POST"), shortString("/v1/auth"), big.NewInt(0),
		big.NewInt(tsSec), big.NewInt(expSec))
	return messageHash(chainID, account, sh)
}

// OrderMessage is the signed part of an order; everything else in the body
// (instruction, flags, client_id, trigger_price) is not signed.
type OrderMessage struct {
	TimestampMs int64    // signature_timestamp, milliseconds
	Market      string   // e.g. BTC-USD-PERP
	Side        int      // 1 BUY, 2 SELL
	OrderType   string   // LIMIT, MARKET, STOP_MARKET, ...
	Size        *big.Int // size * 10^8
	Price       *big.Int // price * 10^8, 0 for any *MARKET type
}

// OrderHash is the message hash of an order for account on chainID.
func OrderHash(chainID string, account *big.Int, m OrderMessage) *big.Int {
	sh := hashOnElements(typeHashOrder, big.NewInt(m.TimestampMs), shortString(m.Market),
		big.NewInt(int64(m.Side)), shortString(m.OrderType), m.Size, m.Price)
	return messageHash(chainID, account, sh)
}

// Key is a Stark-curve private key with its public point.
type Key struct {
	priv *ecdsa.PrivateKey
	pub  starkcurve.G1Affine
}

// ParseKey validates a private key (hex): it must be a scalar in [1, n).
// Errors never echo the key.
func ParseKey(hex string) (*Key, error) {
	hex = strings.TrimSpace(hex)
	if !strings.HasPrefix(hex, "0x") && !strings.HasPrefix(hex, "0X") {
		return nil, errors.New("starkPrivateKey must be 0x-prefixed hex")
	}
	k, ok := new(big.Int).SetString(hex[2:], 16)
	if !ok || len(hex) < 3 {
		return nil, errors.New("starkPrivateKey is not valid hex")
	}
	if k.Sign() <= 0 || k.Cmp(ecOrder) >= 0 {
		return nil, errors.New("starkPrivateKey is not a valid Stark scalar (must be in [1, curve order))")
	}
	var pub starkcurve.G1Affine
	pub.ScalarMultiplicationBase(k)
	buf := make([]byte, 64)
	pb := pub.Bytes()
	copy(buf, pb[:])
	k.FillBytes(buf[32:])
	var pk ecdsa.PrivateKey
	if _, err := pk.SetBytes(buf); err != nil {
		return nil, errors.New("starkPrivateKey is not a valid Stark scalar")
	}
	return &Key{priv: &pk, pub: pub}, nil
}

// PublicKey is the x coordinate of priv·G, as Starknet defines it.
func (k *Key) PublicKey() *big.Int {
	var x big.Int
	k.pub.X.BigInt(&x)
	return &x
}

// Sign signs a message hash (< 2^251). gnark uses a random nonce and low s;
// we retry until r, s and 1/s are in [1, 2^251) as Starknet verifiers demand.
func (k *Key) Sign(hash *big.Int) (r, s *big.Int, err error) {
	if hash.Sign() < 0 || hash.Cmp(two251) >= 0 {
		return nil, nil, errors.New("message hash out of range")
	}
	msg := make([]byte, 32)
	hash.FillBytes(msg)
	for range 16 {
		sig, err := k.priv.Sign(msg, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("stark sign: %w", err)
		}
		r = new(big.Int).SetBytes(sig[:32])
		s = new(big.Int).SetBytes(sig[32:])
		w := new(big.Int).ModInverse(s, ecOrder)
		if inFeltRange(r) && inFeltRange(s) && w != nil && inFeltRange(w) {
			return r, s, nil
		}
	}
	return nil, nil, errors.New("stark sign: no valid nonce found")
}

func inFeltRange(v *big.Int) bool { return v.Sign() > 0 && v.Cmp(two251) < 0 }

// FormatSignature is the wire form: a JSON array of two decimal strings.
func FormatSignature(r, s *big.Int) string {
	b, _ := json.Marshal([]string{r.String(), s.String()})
	return string(b)
}

// ParseSignature reads ["r","s"] (decimal or 0x-hex members).
func ParseSignature(v string) (r, s *big.Int, err error) {
	var parts []string
	if err := json.Unmarshal([]byte(v), &parts); err != nil || len(parts) != 2 {
		return nil, nil, errors.New(`signature must be a JSON array ["r","s"]`)
	}
	r, err1 := ParseFelt(parts[0])
	s, err2 := parseScalar(parts[1])
	if err1 != nil || err2 != nil {
		return nil, nil, errors.New("signature members must be numbers below the curve order")
	}
	return r, s, nil
}

func parseScalar(v string) (*big.Int, error) {
	if strings.HasPrefix(v, "0x") {
		x, ok := new(big.Int).SetString(v[2:], 16)
		if !ok {
			return nil, errors.New("bad hex")
		}
		return x, nil
	}
	x, ok := new(big.Int).SetString(v, 10)
	if !ok {
		return nil, errors.New("bad decimal")
	}
	return x, nil
}

// VerifyStark checks (r, s) over hash for the public key x coordinate pub.
// Starknet signers emit high s half the time; gnark's Verify refuses it, so s
// is normalised to n - s first. With only x known both y are tried, as
// Starkware's verifier does.
func Verify(pub, hash, r, s *big.Int) bool {
	if pub == nil || hash == nil || r == nil || s == nil {
		return false
	}
	if hash.Sign() < 0 || hash.Cmp(two251) >= 0 || !inFeltRange(r) || s.Sign() <= 0 || s.Cmp(ecOrder) >= 0 {
		return false
	}
	half := new(big.Int).Rsh(ecOrder, 1)
	if s.Cmp(half) > 0 {
		s = new(big.Int).Sub(ecOrder, s)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	msg := make([]byte, 32)
	hash.FillBytes(msg)
	var x fp.Element
	if pub.Sign() <= 0 || pub.Cmp(fp.Modulus()) >= 0 {
		return false
	}
	x.SetBigInt(pub)
	// y² = x³ + x + b
	_, b := starkcurve.CurveCoefficients()
	var y2 fp.Element
	y2.Square(&x).Mul(&y2, &x).Add(&y2, &x).Add(&y2, &b)
	var y fp.Element
	if y.Sqrt(&y2) == nil {
		return false
	}
	for _, cand := range []fp.Element{y, *new(fp.Element).Neg(&y)} {
		var pk ecdsa.PublicKey
		pk.A.X, pk.A.Y = x, cand
		if ok, _ := pk.Verify(sig, msg, nil); ok {
			return true
		}
	}
	return false
}

// AccountAddress checks an account address is a felt and returns it.
func AccountAddress(v string) (*big.Int, error) {
	if !strings.HasPrefix(strings.TrimSpace(v), "0x") {
		return nil, errors.New("accountAddress must be 0x-prefixed hex")
	}
	a, err := ParseFelt(v)
	if err != nil {
		return nil, fmt.Errorf("accountAddress: %v", err)
	}
	if a.Sign() == 0 || a.Cmp(addrBound) >= 0 {
		return nil, errors.New("accountAddress is not a valid Starknet address")
	}
	return a, nil
}

// MainAccountAddress is the address Paradex deploys for a main key: the
// Starknet contract address of a proxy (class proxyHash, deployer 0, salt
// the public key) whose constructor calls initialize(accountHash, [pub, 0])
// (paradex-py derive_l2_address_starknet). A credential whose address is
// not this one signs with a subkey.
func MainAccountAddress(pub, accountHash, proxyHash *big.Int) *big.Int {
	calldata := hashOnElements(accountHash, starknetKeccak("initialize"), big.NewInt(2), pub, big.NewInt(0))
	a := hashOnElements(shortString("STARKNET_CONTRACT_ADDRESS"), big.NewInt(0), pub, proxyHash, calldata)
	return a.Mod(a, addrBound)
}
