package hyperliquid

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os"
	"strings"
	"testing"
)

// vectorFile is the public signing-vector set (shared/vectors/hyperliquid.json),
// copied into testdata so the module's tests are self-contained.
type vectorFile struct {
	Vectors []Vector `json:"vectors"`
}

// Vector is one ccxt-produced request.
type Vector struct {
	Name       string `json:"name"`
	Env        string `json:"env"`
	Credential struct {
		PrivateKey    string `json:"privateKey"`
		AgentAddress  string `json:"agentAddress"`
		WalletAddress string `json:"walletAddress"`
	} `json:"credential"`
	Inputs struct {
		Args    []json.RawMessage `json:"args"`
		Params  map[string]any    `json:"params"`
		ClockMs int64             `json:"clockMs"`
	} `json:"inputs"`
	Request struct {
		URL  string  `json:"url"`
		Body *string `json:"body"`
	} `json:"request"`
	Signed bool `json:"signed"`
}

func loadVectors(t *testing.T) []Vector {
	t.Helper()
	raw, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	// Keep the copy honest when the shared original is around.
	if orig, err := os.ReadFile("../../../../shared/vectors/hyperliquid.json"); err == nil && !bytes.Equal(orig, raw) {
		t.Fatal("testdata/vectors.json differs from shared/vectors/hyperliquid.json: copy it again")
	}
	var f vectorFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	return f.Vectors
}

func sameInt(a, b string) bool {
	x, ok1 := new(big.Int).SetString(strings.TrimPrefix(a, "0x"), 16)
	y, ok2 := new(big.Int).SetString(strings.TrimPrefix(b, "0x"), 16)
	return ok1 && ok2 && x.Cmp(y) == 0
}

// TestVectors signs every ccxt vector's action with its credential and
// compares r, s (as integers) and v; the agent address must match too.
func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			key, err := ParsePrivateKey(v.Credential.PrivateKey)
			if err != nil {
				t.Fatal(err)
			}
			if got := Address(key.PubKey()); got != v.Credential.AgentAddress {
				t.Fatalf("agent address %s, want %s", got, v.Credential.AgentAddress)
			}
			if !v.Signed {
				return
			}
			var body struct {
				Action       json.RawMessage `json:"action"`
				Nonce        uint64          `json:"nonce"`
				Signature    Signature       `json:"signature"`
				VaultAddress *string         `json:"vaultAddress"`
				ExpiresAfter *uint64         `json:"expiresAfter"`
			}
			if err := json.Unmarshal([]byte(*v.Request.Body), &body); err != nil {
				t.Fatal(err)
			}
			action, err := DecodeAction(body.Action)
			if err != nil {
				t.Fatal(err)
			}
			var vault []byte
			if body.VaultAddress != nil {
				if vault, err = ParseAddress(*body.VaultAddress); err != nil {
					t.Fatal(err)
				}
			}
			h, err := ActionHash(action, body.Nonce, vault, body.ExpiresAfter)
			if err != nil {
				t.Fatal(err)
			}
			mainnet := v.Env == "mainnet"
			sig := SignL1(key, h, mainnet)
			if !sameInt(sig.R, body.Signature.R) || !sameInt(sig.S, body.Signature.S) || sig.V != body.Signature.V {
				t.Fatalf("signature %+v, want %+v", sig, body.Signature)
			}
			if signer, err := RecoverL1(h, mainnet, body.Signature); err != nil || signer != v.Credential.AgentAddress {
				t.Fatalf("recovered %s (%v), want %s", signer, err, v.Credential.AgentAddress)
			}
			if signer, _ := RecoverL1(h, !mainnet, body.Signature); signer == v.Credential.AgentAddress {
				t.Fatal("signature verifies for the other network too")
			}
		})
	}
}

func TestDomainSeparator(t *testing.T) {
	if got := hex.EncodeToString(domainSeparator[:]); got != "d79297fcdf2ffcd4ae223d01edaa2ba214ff8f401d7c9300d995d17c82aa4040" {
		t.Fatalf("domain separator %s", got)
	}
}

// Test-only actions of the official SDK tests that the gateway never sends.
type dummyAction struct {
	Type string `msgpack:"type"`
	Num  uint64 `msgpack:"num"`
}

type scheduleCancelAction struct {
	Type string  `msgpack:"type"`
	Time *uint64 `msgpack:"time,omitempty"`
}

func limit(tif string) OrderType { return OrderType{Limit: &LimitType{TIF: tif}} }

func trigger(px, tpsl string) OrderType {
	return OrderType{Trigger: &TriggerType{IsMarket: true, TriggerPx: px, Tpsl: tpsl}}
}

func order(asset int, buy bool, p, s string, r bool, t OrderType, c string) OrderWire {
	return OrderWire{Asset: asset, IsBuy: buy, Price: p, Size: s, ReduceOnly: r, Type: t, Cloid: c}
}

// TestFactSheetVectors checks the official Python and Rust SDK vectors and
// the derived vectors of the fact sheet (§5).
func TestFactSheetVectors(t *testing.T) {
	const keyA = "0x0123456789012345678901234567890123456789012345678901234567890123"
	const keyB = "e908f86dbb4d55ac876378565aafeabc187f6690f046459397b17d9b9a19688e"
	u := func(n uint64) *uint64 { return &n }
	vault := "0x1719884eb866cb12b2287399b15f7db5e7d775ea"
	na := func(os ...OrderWire) OrderAction { return OrderAction{Type: "order", Orders: os, Grouping: "na"} }
	tests := []struct {
		name       string
		key        string
		action     any
		nonce      uint64
		vault      string
		expires    *uint64
		msgpack    string
		connID     string
		main, test Signature // zero: not checked
		mainRSV    string    // Rust form r‖s‖v, hex
		testRSV    string
	}{
		{name: "py phantom agent", key: keyA, nonce: 1677777606040,
			action:  na(order(4, true, "1670.1", "0.0147", false, limit("Ioc"), "")),
			msgpack: "83a474797065a56f72646572a66f72646572739186a16104a162c3a170a6313637302e31a173a6302e30313437a172c2a17481a56c696d697481a3746966a3496f63a867726f7570696e67a26e61",
			connID:  "0fcbeda5ae3c4950a548021552a4fea2226858c4453571bf3f24ba017eac2908"},
		{name: "py #1 dummy", key: keyA, action: dummyAction{"dummy", 100000000000},
			connID: "f528daee6a0bd11407b483cfcd9a48c56884180b70ee86f124053e5fc1bf4d57",
			main:   Signature{"0x53749d5b30552aeb2fca34b530185976545bb22d0b3ce6f62e31be961a59298", "0x755c40ba9bf05223521753995abb2f73ab3229be8ec921f350cb447e384d8ed8", 27},
			test:   Signature{"0x542af61ef1f429707e3c76c5293c80d01f74ef853e34b76efffcb57e574f9510", "0x17b8b32f086e8cdede991f1e2c529f5dd5297cbe8128500e00cbaf766204a613", 28}},
		{name: "py #2 order", key: keyA, action: na(order(1, true, "100", "100", false, limit("Gtc"), "")),
			msgpack: "83a474797065a56f72646572a66f72646572739186a16101a162c3a170a3313030a173a3313030a172c2a17481a56c696d697481a3746966a3477463a867726f7570696e67a26e61",
			main:    Signature{"0xd65369825a9df5d80099e513cce430311d7d26ddf477f5b3a33d2806b100d78e", "0x2b54116ff64054968aa237c20ca9ff68000f977c93289157748a3162b6ea940e", 28},
			test:    Signature{"0x82b2ba28e76b3d761093aaded1b1cdad4960b3af30212b343fb2e6cdfa4e3d54", "0x6b53878fc99d26047f4d7e8c90eb98955a109f44209163f52d8dc4278cbbd9f5", 27}},
		{name: "py #3 order with cloid", key: keyA, action: na(order(1, true, "100", "100", false, limit("Gtc"), "0x00000000000000000000000000000001")),
			main: Signature{"0x41ae18e8239a56cacbc5dad94d45d0b747e5da11ad564077fcac71277a946e3", "0x3c61f667e747404fe7eea8f90ab0e76cc12ce60270438b2058324681a00116da", 27},
			test: Signature{"0xeba0664bed2676fc4e5a743bf89e5c7501aa6d870bdb9446e122c9466c5cd16d", "0x7f3e74825c9114bc59086f1eebea2928c190fdfbfde144827cb02b85bbe90988", 28}},
		{name: "py #4 vault", key: keyA, action: dummyAction{"dummy", 100000000000}, vault: vault,
			connID: "de9e09a7a3da45cc694096d4bfdcd89bc1b892d05497c5ecc1f56c335945184c",
			main:   Signature{"0x3c548db75e479f8012acf3000ca3a6b05606bc2ec0c29c50c515066a326239", "0x4d402be7396ce74fbba3795769cda45aec00dc3125a984f2a9f23177b190da2c", 28},
			test:   Signature{"0xe281d2fb5c6e25ca01601f878e4d69c965bb598b88fac58e475dd1f5e56c362b", "0x7ddad27e9a238d045c035bc606349d075d5c5cd00a6cd1da23ab5c39d4ef0f60", 27}},
		{name: "py #5 tpsl", key: keyA, action: na(order(1, true, "100", "100", false, trigger("103", "sl"), "")),
			main: Signature{"0x98343f2b5ae8e26bb2587daad3863bc70d8792b09af1841b6fdd530a2065a3f9", "0x6b5bb6bb0633b710aa22b721dd9dee6d083646a5f8e581a20b545be6c1feb405", 27},
			test: Signature{"0x971c554d917c44e0e1b6cc45d8f9404f32172a9d3b3566262347d0302896a2e4", "0x206257b104788f80450f8e786c329daa589aa0b32ba96948201ae556d5637eac", 28}},
		{name: "py #8 scheduleCancel", key: keyA, action: scheduleCancelAction{Type: "scheduleCancel"},
			main: Signature{"0x6cdfb286702f5917e76cd9b3b8bf678fcc49aec194c02a73e6d4f16891195df9", "0x6557ac307fa05d25b8d61f21fb8a938e703b3d9bf575f6717ba21ec61261b2a0", 27}},
		{name: "py #9 scheduleCancel time", key: keyA, action: scheduleCancelAction{Type: "scheduleCancel", Time: u(123456789)},
			test: Signature{"0x4e4f2dbd4107c69783e251b7e1057d9f2b9d11cee213441ccfa2be63516dc5bc", "0x706c656b23428c8ba356d68db207e11139ede1670481a9e01ae2dfcdb0e1a678", 27}},
		{name: "rust #10 limit (2000.0 signed verbatim)", key: keyB, nonce: 1583838,
			action:  na(order(1, true, "2000.0", "3.5", false, limit("Ioc"), "")),
			mainRSV: "77957e58e70f43b6b68581f2dc42011fc384538a2e5b7bf42d5b936f19fbb67360721a8598727230f67080efee48c812a6a4442013fd3b0eed509171bef9f23f1c",
			testRSV: "cd0925372ff1ed499e54883e9a6205ecfadec748f80ec463fe2f84f1209648776377961965cb7b12414186b1ea291e95fd512722427efcbcfb3b0b2bcd4d79d01c"},
		{name: "rust #11 cloid", key: keyB, nonce: 1583838,
			action:  na(order(1, true, "2000.0", "3.5", false, limit("Ioc"), "0x1e60610f0b3d420597c88c1fed2ad5ee")),
			mainRSV: "d3e894092eb27098077145714630a77bbe3836120ee29df7d935d8510b03a08f456de5ec1be82aa65fc6ecda9ef928b0445e212517a98858cfaa251c4cd7552b1c"},
		{name: "rust #12 tp", key: keyB, nonce: 1583838,
			action:  na(order(1, true, "2000.0", "3.5", false, trigger("2000.0", "tp"), "")),
			mainRSV: "b91e5011dff15e4b4a40753730bda44972132e7b75641f3cac58b66159534a170d422ee1ac3c7a7a2e11e298108a2d6b8da8612caceaeeb3e571de3b2dfda9e41b"},
		{name: "rust #14 cancel (compact int 82382)", key: keyB, nonce: 1583838,
			action:  CancelAction{Type: "cancel", Cancels: []CancelWire{{Asset: 1, Oid: 82382}}},
			msgpack: "82a474797065a663616e63656ca763616e63656c739182a16101a16fce000141ce",
			connID:  "a53262329d1e221a88ff73e5ce330e0e47fb646091cae7020c34c346e592b77e",
			mainRSV: "02f76cc5b16e0810152fa0e14e7b219f49c361e3325f771544c6f54e157bf9fa17ed0afc11a98596be85d5cd9f86600aad515337318f7ab346e5ccc1b03425d51b",
			testRSV: "6ffebadfd48067663390962539fbde76cfa36f53be65abe2ab72c9db6d0db44457720db9d7c4860f142a484f070c84eb4b9694c3a617c83f0d698a27e55fd5e01c"},
		{name: "derived updateLeverage", key: keyA, nonce: 1700000000000,
			action: UpdateLeverageAction{Type: "updateLeverage", Asset: 0, IsCross: true, Leverage: 10},
			connID: "e69c035a0297dd24d9b288c3e8509ae251baf7bf43a43b895327a2cab098389e",
			main:   Signature{"0x4fa0ed1f37b56019934737616f720140dc2d415064df1f02ef44e0a6431dc02d", "0x541f7b41434b08725ae4d5908e3dc426e8a9ae09833f907d077fc4e32df6c2e", 27},
			test:   Signature{"0xd4498ef57bf0c1361161ef3cd6da84a912a93c162257f2d45f7211711115f238", "0x1f351995d1950021ddcc17c1f9b1ad60870c56ab7d87bc3f32210970229b6bbf", 27}},
		{name: "derived cancelByCloid", key: keyA, nonce: 1700000000000,
			action: CancelByCloidAction{Type: "cancelByCloid", Cancels: []CancelByCloidWire{{Asset: 0, Cloid: "0x00000000000000000000000000000001"}}},
			connID: "1d854324d277d0ec7ab94e7d490f930b8cabb29049f2563b612afb8d0394cd50",
			main:   Signature{"0x80bc61ec5a6bd1931885c88ccb664ac5543ba861475262636445d21263b97318", "0x6bbfac7cec115672a533ce377a822433f48a320f1e3c3ce09d2f38184f82979c", 27}},
		{name: "derived expiresAfter", key: keyA, nonce: 1700000000000, expires: u(1700000060000),
			action: na(order(0, false, "65000.5", "0.001", true, limit("Alo"), "")),
			connID: "d023298df3d1780f4410eeefaef67c2ebae7ebeade4edb7932da32c5471ea3b0",
			test:   Signature{"0x2b214e06f09e1b83ebce8da85d778ca3174498bdf18284b859d19479529218c0", "0x346bedd69f24926fcbaf873c974ce2a4b2fa5b6e49514a8b0c508056060668c1", 28}},
		{name: "derived positionTpsl pair", key: keyA, nonce: 1700000000000,
			action: OrderAction{Type: "order", Grouping: "positionTpsl", Orders: []OrderWire{
				order(0, false, "70000", "0.01", true, trigger("70000", "tp"), ""),
				order(0, false, "60000", "0.01", true, trigger("60000", "sl"), "")}},
			connID: "986f48ef7d5c984aa98d6d6c65318e42af3e6f635999924b19d795a80e80022e",
			main:   Signature{"0xb4e5f02dd5f6e10363ae194fa5e62a0c03ed09322ce49122d0f8f07ecd72ee6", "0x3e9d9777cebcc36a6c49e8395400edafa5ba91cccc90cbf93d641d7f47871c24", 27}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, err := ParsePrivateKey(tc.key)
			if err != nil {
				t.Fatal(err)
			}
			if tc.msgpack != "" {
				b, err := PackAction(tc.action)
				if err != nil || hex.EncodeToString(b) != tc.msgpack {
					t.Fatalf("msgpack %x (%v), want %s", b, err, tc.msgpack)
				}
			}
			var vault []byte
			if tc.vault != "" {
				vault, _ = ParseAddress(tc.vault)
			}
			h, err := ActionHash(tc.action, tc.nonce, vault, tc.expires)
			if err != nil {
				t.Fatal(err)
			}
			if tc.connID != "" && hex.EncodeToString(h[:]) != tc.connID {
				t.Fatalf("connectionId %x, want %s", h, tc.connID)
			}
			check := func(mainnet bool, want Signature, rsv string) {
				if rsv != "" {
					want = Signature{R: rsv[:64], S: rsv[64:128], V: int(must(hex.DecodeString(rsv[128:]))[0])}
				}
				if want.R == "" {
					return
				}
				got := SignL1(key, h, mainnet)
				if !sameInt(got.R, want.R) || !sameInt(got.S, want.S) || got.V != want.V {
					t.Errorf("mainnet=%v: signature %+v, want %+v", mainnet, got, want)
				}
			}
			check(true, tc.main, tc.mainRSV)
			check(false, tc.test, tc.testRSV)
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestParsePrivateKey(t *testing.T) {
	tests := []struct {
		name, key string
		ok        bool
	}{
		{"with 0x", "0x0123456789012345678901234567890123456789012345678901234567890123", true},
		{"bare", "e908f86dbb4d55ac876378565aafeabc187f6690f046459397b17d9b9a19688e", true},
		{"zero", "0x" + strings.Repeat("0", 64), false},
		{"curve order", "0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", false},
		{"short", "0x0123", false},
		{"not hex", "0x" + strings.Repeat("z", 64), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePrivateKey(tc.key)
			if (err == nil) != tc.ok {
				t.Fatalf("ParsePrivateKey: err %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
