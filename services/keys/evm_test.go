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

// TestHyperliquidSecretValidation runs the credential-creation check on
// Hyperliquid secrets: a checksummed or lowercase 0x address (account and
// optional vault) and a secp256k1 key in [1, N-1]; every refusal names the
// field and never echoes a value.
func TestHyperliquidSecretValidation(t *testing.T) {
	const (
		checksummed = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
		typo        = "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
		lower       = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
		vault       = "0x1719884eb866cb12b2287399b15f7db5e7d775ea"
	)
	key := strings.Repeat("1", 64)
	n := "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"
	secret := func(fields ...string) []byte {
		var parts []string
		for i := 0; i+1 < len(fields); i += 2 {
			parts = append(parts, `"`+fields[i]+`":"`+fields[i+1]+`"`)
		}
		return []byte("{" + strings.Join(parts, ",") + "}")
	}
	tests := []struct {
		name    string
		secret  []byte
		problem string // "" when valid; else the message names it
	}{
		{"checksummed account", secret("accountAddress", checksummed, "agentPrivateKey", key), ""},
		{"lowercase account, 0x key", secret("accountAddress", lower, "agentPrivateKey", "0x"+key), ""},
		{"uppercase hex key", secret("accountAddress", lower, "agentPrivateKey", strings.ToUpper(strings.Repeat("ab", 32))), ""},
		{"with a vault", secret("accountAddress", lower, "agentPrivateKey", key, "vaultAddress", vault), ""},
		{"bad account checksum", secret("accountAddress", typo, "agentPrivateKey", key), `"accountAddress" for hyperliquid must be a checksummed (EIP-55)`},
		{"account without 0x", secret("accountAddress", lower[2:], "agentPrivateKey", key), `"accountAddress" for hyperliquid must be 0x followed by 40 hex`},
		{"short account", secret("accountAddress", lower[:40], "agentPrivateKey", key), `"accountAddress" for hyperliquid must be 0x followed by 40 hex`},
		{"bad vault checksum", secret("accountAddress", lower, "agentPrivateKey", key, "vaultAddress", typo), `"vaultAddress" for hyperliquid must be a checksummed (EIP-55)`},
		{"vault not hex", secret("accountAddress", lower, "agentPrivateKey", key, "vaultAddress", "0x"+strings.Repeat("g", 40)), `"vaultAddress" for hyperliquid must be 0x followed by 40 hex`},
		{"zero key", secret("accountAddress", lower, "agentPrivateKey", strings.Repeat("0", 64)), `"agentPrivateKey" for hyperliquid is not a valid secp256k1`},
		{"key equal to the curve order", secret("accountAddress", lower, "agentPrivateKey", n), `"agentPrivateKey" for hyperliquid is not a valid secp256k1`},
		{"short key", secret("accountAddress", lower, "agentPrivateKey", key[:62]), `"agentPrivateKey" for hyperliquid must be 64 hex`},
		{"missing key", secret("accountAddress", lower), `"agentPrivateKey" is required`},
		{"missing account", secret("agentPrivateKey", key), `"accountAddress" is required`},
		{"unknown field", secret("accountAddress", lower, "agentPrivateKey", key, "privateKey", key), `secret field "privateKey" is not accepted`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := validateSecret("hyperliquid", tc.secret)
			if tc.problem == "" {
				if err != nil {
					t.Fatalf("valid secret refused: %v", err)
				}
				return
			}
			if err == nil || err.Code != "INVALID_REQUEST" || !strings.Contains(err.Message, tc.problem) {
				t.Fatalf("got %v, want INVALID_REQUEST containing %q", err, tc.problem)
			}
			for _, v := range []string{key, typo[2:], n, lower[2:]} {
				if strings.Contains(err.Message, v) {
					t.Fatalf("the message echoes a value: %s", err.Message)
				}
			}
		})
	}
}
