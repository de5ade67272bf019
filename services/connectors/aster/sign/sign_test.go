package sign

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/testenv"
)

type vector = testenv.Vector

// loadVectors reads shared/vectors/aster.json, copied to testdata.
func loadVectors(t *testing.T) []vector {
	return testenv.LoadVectors(t, "../testdata/vectors.json", 20)
}

// signedMessage splits a vector's parameter string (query or body) into
// the message signed and the signature, which must be last.
func signedMessage(t *testing.T, v vector) (string, string) {
	t.Helper()
	raw := v.Query()
	if raw == "" {
		raw = v.BodyText()
	}
	msg, sig, ok := strings.Cut(raw, "&signature=")
	if !ok || strings.Contains(sig, "&") {
		t.Fatalf("%s: signature is not the last parameter of %q", v.Name, raw)
	}
	return msg, sig
}

func chainOf(env string) int64 {
	if env == "testnet" {
		return TestnetChainID
	}
	return MainnetChainID
}

// TestSignReproducesVectors signs every vector's message with its key and
// gets ccxt's signature byte for byte; the signer is the key's address.
func TestSignReproducesVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			key, err := ParsePrivateKey(v.Credential["signerPrivateKey"])
			if err != nil {
				t.Fatal(err)
			}
			if got := Address(key.PubKey()); got != strings.ToLower(v.Credential["signerAddress"]) {
				t.Errorf("derived signer %s, vector says %s", got, v.Credential["signerAddress"])
			}
			msg, want := signedMessage(t, v)
			if got := Sign(key, msg, chainOf(v.Env)); got != want {
				t.Errorf("Sign = %s, want %s", got, want)
			}
			if who, err := Recover(msg, want, chainOf(v.Env)); err != nil || who != strings.ToLower(v.Credential["signerAddress"]) {
				t.Errorf("Recover = %s, %v", who, err)
			}
			if !strings.Contains(msg, "signer="+v.Credential["signerAddress"]) || !strings.Contains(msg, "user="+v.Credential["userAddress"]) {
				t.Errorf("message lacks user or signer: %s", msg)
			}
		})
	}
}

// TestSignFactSheetExample is the fact sheet's worked example (§2.3):
// the docs' demonstration key, both chain ids, domain and digest.
func TestSignFactSheetExample(t *testing.T) {
	const msg = "symbol=ASTERUSDT&type=LIMIT&side=BUY&timeInForce=GTC&quantity=20&price=0.5&nonce=1748310859508867&user=0x63DD5aCC6b1aa0f563956C0e534DD30B6dcF7C4e&signer=0x21cF8Ae13Bb72632562c6Fff438652Ba1a151bb0"
	key, err := ParsePrivateKey("0x4fd0a42218f3eae43a6ce26d22544e986139a01e5b34a62db53757ffca81bae1")
	if err != nil {
		t.Fatal(err)
	}
	if a := Address(key.PubKey()); a != "0x21cf8ae13bb72632562c6fff438652ba1a151bb0" {
		t.Errorf("signer %s", a)
	}
	for _, tt := range []struct {
		chain               int64
		domain, digest, sig string
	}{
		{1666, "a95d0a7a6f3f17fcebb0c2336645385ce79cde7523f71ab147fdb7f15e9f37f9", "214122039b686e20a15baab91d368d354cf8c88067cb8b0e96e9018d8b08a625",
			"0x0a56c5923ebf3524475c5f631940ec4c0e41dbd300ad28198d1915d8f3ca49ce26fd1aeb8b0c3079133595da0de38322ae7e860e0c76d032c4a491d27c1430b01c"},
		{714, "fad01b07bed5729a04dbb977fd86da612eba71d668660bf12cf10b3d65b74d94", "d0a3cddc3992449300d5b6fa97e441d66d0f950a032b0707455996c29d8477c5",
			"0xf91e000376f360c1661cf0fbc79a816e915dce485c616bd49c5e35c6cbc5ba5042ccf75a2bffd282676dbf698087a73982bfd1491a993eeedc276f6827c94a8c1c"},
	} {
		d, g := DomainSeparator(tt.chain), Digest(msg, tt.chain)
		if hex.EncodeToString(d[:]) != tt.domain || hex.EncodeToString(g[:]) != tt.digest {
			t.Errorf("chain %d: domain %x digest %x", tt.chain, d, g)
		}
		if s := Sign(key, msg, tt.chain); s != tt.sig {
			t.Errorf("chain %d: signature %s", tt.chain, s)
		}
	}
}

func TestCheckAddress(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{"0x1400C59765bcf62EBbcc03893e9F13B5E9668B80", true},
		{"0x1400c59765bcf62ebbcc03893e9f13b5e9668b80", true},
		{"0x1400C59765bcf62EBbcc03893e9F13B5E9668b80", false}, // one letter's case flipped
		{"0x1400c59765bcf62ebbcc03893e9f13b5e9668b8", false},
		{"1400c59765bcf62ebbcc03893e9f13b5e9668b80", false},
	} {
		if err := CheckAddress(tt.in); (err == nil) != tt.ok {
			t.Errorf("CheckAddress(%s) = %v", tt.in, err)
		}
	}
	for _, k := range []string{"", "0x00", strings.Repeat("0", 64), strings.Repeat("f", 64), "zz" + strings.Repeat("1", 62)} {
		if _, err := ParsePrivateKey(k); err == nil {
			t.Errorf("ParsePrivateKey(%q) accepted", k)
		}
	}
}
