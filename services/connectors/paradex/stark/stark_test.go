package stark

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/testenv"
)

func vectors(t *testing.T) []testenv.Vector {
	return testenv.LoadVectors(t, "../testdata/vectors.json", 18)
}

func chainFor(env string) string {
	if env == "testnet" {
		return ChainTestnet
	}
	return ChainMainnet
}

func big16(t *testing.T, s string) *big.Int {
	t.Helper()
	v, err := ParseFelt(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func bigDec(s string) *big.Int { v, _ := new(big.Int).SetString(s, 10); return v }

// Hashes computed with two independent implementations (gnark and starknet.js).
func TestMessageHashesExact(t *testing.T) {
	acct := big16(t, "0x129c135ed63df9353885e292be4426b8ed6122b13c6c0e1bb787288a1f5adfa")
	cases := []struct {
		name string
		got  *big.Int
		want string
	}{
		{"domain sepolia", domainHash(ChainTestnet), "0x38b9242cb46eb19ff458c80a8f0eda7e8e26d8d6d54a63d9b5ed89750e39ef2"},
		{"domain mainnet", domainHash(ChainMainnet), "0x6f74f207280b65cf663fb8d7763fac1e7398cd6d7da5d7681dc300ee4278a0a"},
		{"auth sepolia", AuthHash(ChainTestnet, acct, 1706868900, 1706955300), "0x483c5a1b923d0e130ea8ead403e029af1786ef0210ba6d429032a6bad5df53e"},
		{"auth mainnet", AuthHash(ChainMainnet, acct, 1706868900, 1706955300), "0xb8d8e018a275691ac6064ea78bb2f2175e70cbf2b92b69ccab7bafa35f7bea"},
		{"order eth sepolia", OrderHash(ChainTestnet, acct, OrderMessage{1634736000000, "ETH-USD-PERP", 1, "LIMIT", big.NewInt(10000000), big.NewInt(150000000000)}), "0x357f784e57d5c5b56410bfd988055f93958794f4e550742849e6c82b943c92d"},
		{"order eth mainnet", OrderHash(ChainMainnet, acct, OrderMessage{1634736000000, "ETH-USD-PERP", 1, "LIMIT", big.NewInt(10000000), big.NewInt(150000000000)}), "0x5e781827f02a3c83a1a3105f1fb1134c1ad631437a210d6080ff98f4a50fc78"},
	}
	for _, c := range cases {
		if HexFelt(c.got) != c.want {
			t.Errorf("%s: got %s want %s", c.name, HexFelt(c.got), c.want)
		}
	}
	// The same hashes through the body → message path (scaling, side, market price 0).
	bodies := []struct {
		o    OrderRequest
		want string
	}{
		{OrderRequest{Market: "BTC-USD-PERP", Side: "BUY", Type: "LIMIT", Size: "0.001", Price: "65000.5", SignatureTimestamp: 1700000000000}, "0x2fb342d85bc6fee5aa84532c701d42a63baac1aeaf5d90a43e9461abb9a0d7e"},
		{OrderRequest{Market: "BTC-USD-PERP", Side: "SELL", Type: "MARKET", Size: "0.25", SignatureTimestamp: 1700000000000}, "0x35a1cabd1f7fd04c54d3f43981088737ee31c4eec093bce14ebdc0748c4d3d8"},
		{OrderRequest{Market: "BTC-USD-PERP", Side: "SELL", Type: "STOP_MARKET", Size: "0.25", Price: "123", SignatureTimestamp: 1700000000000}, "0x158cfef78d2753ac43ff9026c03de0e144bac0c3fa8d629200aaf349e5062c4"},
	}
	for _, b := range bodies {
		m, err := b.o.SignedMessage()
		if err != nil {
			t.Fatal(err)
		}
		if got := HexFelt(OrderHash(ChainMainnet, acct, m)); got != b.want {
			t.Errorf("%s %s: got %s want %s", b.o.Side, b.o.Type, got, b.want)
		}
	}
}

// Signatures made by starknet.js (two of them high-s) must verify.
func TestKnownSignaturesVerify(t *testing.T) {
	key, err := ParseKey("0x543b6cf6c91817a87174aaea4fb370ac1c694e864d7740d728f8344d53e815")
	if err != nil {
		t.Fatal(err)
	}
	if HexFelt(key.PublicKey()) != "0x2c144d2f2d4fc61b6f8967f3ba0012a87d90140bcfe5a3e92e8df83258c960f" {
		t.Fatalf("public key %s", HexFelt(key.PublicKey()))
	}
	rows := []struct{ hash, r, s string }{
		{"0x483c5a1b923d0e130ea8ead403e029af1786ef0210ba6d429032a6bad5df53e", "728472846538256935278508050836387147693448114851126928802122908032536993301", "1659395995211630973083438351161075291134920921906225343246035604012943576337"},
		{"0xd38fca3e24662dea69b9bc6699dbaf95d018c8fb7c9940f51aabb813e8d8bf", "1764617635257192946775726868559299534369310490146904258787610427367346887090", "3372647694693421162915689480298852890143726558504560762914368252517087464545"},
		{"0xb8d8e018a275691ac6064ea78bb2f2175e70cbf2b92b69ccab7bafa35f7bea", "1755071906919213335285561333143480791772513465302485599976654015961231407047", "3353471433839545784342289256251414025243366303358038672128692283551201337156"},
		{"0x2fb342d85bc6fee5aa84532c701d42a63baac1aeaf5d90a43e9461abb9a0d7e", "2178126956756441930245217760864276750601159535366860237653333990459586577957", "343041656553863802334853266242409987439899535209946093145082868619833646568"},
		{"0x35a1cabd1f7fd04c54d3f43981088737ee31c4eec093bce14ebdc0748c4d3d8", "781657158919474194840683854379642446622848580755653379914422344424328378904", "3000329247419445442650561609709068531662520634176475698635767059766898549876"},
	}
	for _, row := range rows {
		h, r, s := big16(t, row.hash), bigDec(row.r), bigDec(row.s)
		if !Verify(key.PublicKey(), h, r, s) {
			t.Errorf("gnark path rejects %s", row.hash)
		}
		if !refVerify(key.PublicKey(), h, r, s) {
			t.Errorf("reference rejects %s", row.hash)
		}
		bad := new(big.Int).Add(h, big.NewInt(1))
		if Verify(key.PublicKey(), bad, r, s) || refVerify(key.PublicKey(), bad, r, s) {
			t.Errorf("%s: a changed hash verifies", row.hash)
		}
	}
}

// vectorHash rebuilds the signed message of a vector from its request.
func vectorHash(t *testing.T, v testenv.Vector) (hash *big.Int, sig string) {
	t.Helper()
	chain := chainFor(v.Env)
	if strings.HasSuffix(v.Name, "/auth") {
		h := v.Request.Headers
		acct := big16(t, h["PARADEX-STARKNET-ACCOUNT"])
		ts, _ := strconv.ParseInt(h["PARADEX-TIMESTAMP"], 10, 64)
		exp, _ := strconv.ParseInt(h["PARADEX-SIGNATURE-EXPIRATION"], 10, 64)
		if ts*1000 != v.Inputs.ClockMs {
			t.Fatalf("%s: timestamp %d is not the clock in seconds", v.Name, ts)
		}
		return AuthHash(chain, acct, ts, exp), h["PARADEX-STARKNET-SIGNATURE"]
	}
	var o OrderRequest
	if err := json.Unmarshal([]byte(v.BodyText()), &o); err != nil {
		t.Fatalf("%s: %v", v.Name, err)
	}
	if o.SignatureTimestamp != v.Inputs.ClockMs {
		t.Fatalf("%s: signature_timestamp %d is not the clock in ms", v.Name, o.SignatureTimestamp)
	}
	m, err := o.SignedMessage()
	if err != nil {
		t.Fatalf("%s: %v", v.Name, err)
	}
	return OrderHash(chain, big16(t, v.Credential["address"]), m), o.Signature
}

func signedVector(v testenv.Vector) bool {
	return v.Request.Headers["PARADEX-STARKNET-SIGNATURE"] != "" || strings.Contains(v.BodyText(), `"signature"`)
}

// Every signed vector: our hash chain makes ccxt's signature verify under the
// vector's public key (a wrong hash cannot), and our own signature verifies.
func TestVectorsHashAndSignature(t *testing.T) {
	n := 0
	for _, v := range vectors(t) {
		if !signedVector(v) {
			continue
		}
		n++
		t.Run(v.Name, func(t *testing.T) {
			key, err := ParseKey(v.Credential["starkPrivateKey"])
			if err != nil {
				t.Fatal(err)
			}
			if HexFelt(key.PublicKey()) != v.Credential["starkPublicKey"] {
				t.Fatalf("public key %s, vector %s", HexFelt(key.PublicKey()), v.Credential["starkPublicKey"])
			}
			hash, sig := vectorHash(t, v)
			r, s, err := ParseSignature(sig)
			if err != nil {
				t.Fatal(err)
			}
			if !Verify(key.PublicKey(), hash, r, s) || !refVerify(key.PublicKey(), hash, r, s) {
				t.Fatalf("ccxt signature does not verify over our hash %s", HexFelt(hash))
			}
			other := new(big.Int).Add(hash, big.NewInt(1))
			if Verify(key.PublicKey(), other, r, s) || refVerify(key.PublicKey(), other, r, s) ||
				Verify(key.PublicKey(), hash, new(big.Int).Add(r, big.NewInt(1)), s) {
				t.Fatal("ccxt signature verifies a changed hash or a changed r")
			}
			for range 5 {
				r2, s2, err := key.Sign(hash)
				if err != nil {
					t.Fatal(err)
				}
				if !refVerify(key.PublicKey(), hash, r2, s2) || !Verify(key.PublicKey(), hash, r2, s2) {
					t.Fatal("our signature does not verify")
				}
				if refVerify(key.PublicKey(), new(big.Int).Xor(hash, big.NewInt(1)), r2, s2) {
					t.Fatal("our signature verifies a different hash")
				}
			}
		})
	}
	if n != 10 {
		t.Fatalf("%d signed vectors, want 10", n)
	}
}

func TestParseKeyRejects(t *testing.T) {
	for _, k := range []string{"", "0x", "0x0", "123", "0xzz",
		"0x0800000000000010ffffffffffffffffb781126dcae7b2321e66a241adc64d2f"} {
		if _, err := ParseKey(k); err == nil {
			t.Errorf("%q accepted", k)
		} else if k != "" && len(k) > 4 && strings.Contains(err.Error(), k[2:]) {
			t.Errorf("error echoes the key: %v", err)
		}
	}
	for _, a := range []string{"", "0x0", "123", "0x" + strings.Repeat("f", 63)} {
		if _, err := AccountAddress(a); err == nil {
			t.Errorf("address %q accepted", a)
		}
	}
}

// The official key/address vector (paradex-py tests/api/test_account.py).
func TestMainAccountAddress(t *testing.T) {
	pub := big16(t, "0x2c144d2f2d4fc61b6f8967f3ba0012a87d90140bcfe5a3e92e8df83258c960f")
	got := MainAccountAddress(pub, big16(t, "0x41cb0280ebadaa75f996d8d92c6f265f6d040bb3ba442e5f86a554f1765244e"),
		big16(t, "0x3530cc4759d78042f1b543bf797f5f3d647cde0388c33734cf91b7f7b9314a9"))
	if HexFelt(got) != "0x129c135ed63df9353885e292be4426b8ed6122b13c6c0e1bb787288a1f5adfa" {
		t.Fatalf("address %s", HexFelt(got))
	}
}
