package okx

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
)

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name             string
		env              map[string]string
		mainnet, testnet string
		exp              time.Duration
		err              string
	}{
		{name: "defaults", mainnet: "https://www.okx.com", testnet: "https://www.okx.com", exp: 5 * time.Second},
		{name: "override both", env: map[string]string{"PERPGATE_OKX_URL": "http://127.0.0.1:8097/"},
			mainnet: "http://127.0.0.1:8097", testnet: "http://127.0.0.1:8097", exp: 5 * time.Second},
		{name: "exp time", env: map[string]string{"PERPGATE_OKX_EXP_TIME": "2000"},
			mainnet: "https://www.okx.com", testnet: "https://www.okx.com", exp: 2 * time.Second},
		{name: "bad url", env: map[string]string{"PERPGATE_OKX_URL": "www.okx.com"}, err: "PERPGATE_OKX_URL"},
		{name: "exp time too long", env: map[string]string{"PERPGATE_OKX_EXP_TIME": "90000"}, err: "1 to 60000"},
		{name: "exp time not a number", env: map[string]string{"PERPGATE_OKX_EXP_TIME": "5s"}, err: "not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadConfig(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("want error with %q, got %v", tt.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.BaseURL(contract.Mainnet) != tt.mainnet || c.BaseURL(contract.Testnet) != tt.testnet || c.ExpTime != tt.exp {
				t.Errorf("got %s %s %s", c.BaseURL(contract.Mainnet), c.BaseURL(contract.Testnet), c.ExpTime)
			}
		})
	}
}

// TestSecretMasked: the secret type never prints its fields.
func TestSecretMasked(t *testing.T) {
	s := Secret{APIKey: "k-visible?", APISecret: "s-visible?", Passphrase: "p-visible?"}
	for _, out := range []string{s.String(), s.GoString(), fmtAll(s)} {
		if strings.Contains(out, "visible?") {
			t.Errorf("secret printed: %s", out)
		}
	}
}

func fmtAll(s Secret) string {
	var b strings.Builder
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		b.WriteString(fmt.Sprintf(f, s))
	}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "secret", s)
	return b.String() + buf.String()
}
