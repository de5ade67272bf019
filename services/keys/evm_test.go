package keys

import (
	"strings"
	"testing"
)

func TestCheckEVMAddress(t *testing.T) {
	tests := []struct {
		name, addr string
		ok         bool
	}{
		{"eip-55 example", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", true},
		{"eip-55 example 2", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", true},
		{"lowercase", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", true},
		{"uppercase", "0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED", true},
		{"one letter flipped", "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkEVMAddress(tt.addr) == ""; got != tt.ok {
				t.Fatalf("checkEVMAddress(%s) ok=%v, want %v", tt.addr, got, tt.ok)
			}
		})
	}
}

func TestCheckSecp256k1Key(t *testing.T) {
	n := "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"
	nMinus1 := "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140"
	tests := []struct {
		name, key string
		ok        bool
	}{
		{"one", "0x" + strings.Repeat("0", 63) + "1", true},
		{"n-1", nMinus1, true},
		{"zero", strings.Repeat("0", 64), false},
		{"n", n, false},
		{"above n", strings.Repeat("f", 64), false},
		{"short", "0x1234", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problem := checkSecp256k1Key(tt.key)
			if (problem == "") != tt.ok {
				t.Fatalf("checkSecp256k1Key ok=%v (%q), want %v", problem == "", problem, tt.ok)
			}
			if strings.Contains(problem, tt.key) {
				t.Fatal("the problem text echoes the key")
			}
		})
	}
}

func TestHyperliquidSecretValidation(t *testing.T) {
	good := `"accountAddress":"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed","agentPrivateKey":"` + strings.Repeat("1", 64) + `"`
	if _, err := validateSecret("hyperliquid", []byte(`{`+good+`}`)); err != nil {
		t.Fatalf("valid secret refused: %v", err)
	}
	badAddr := `{"accountAddress":"0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed","agentPrivateKey":"` + strings.Repeat("1", 64) + `"}`
	if _, err := validateSecret("hyperliquid", []byte(badAddr)); err == nil || !strings.Contains(err.Message, "EIP-55") {
		t.Fatalf("bad checksum accepted: %v", err)
	}
	zeroKey := `{"accountAddress":"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed","agentPrivateKey":"` + strings.Repeat("0", 64) + `"}`
	if _, err := validateSecret("hyperliquid", []byte(zeroKey)); err == nil || !strings.Contains(err.Message, "secp256k1") {
		t.Fatalf("zero key accepted: %v", err)
	}
}
