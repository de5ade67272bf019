package binance

import (
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
		recv             time.Duration
		err              string
	}{
		{name: "defaults", env: nil, mainnet: "https://fapi.binance.com", testnet: "https://demo-fapi.binance.com", recv: 5 * time.Second},
		{name: "override both", env: map[string]string{"PERPGATE_BINANCE_URL": "http://127.0.0.1:8095/"},
			mainnet: "http://127.0.0.1:8095", testnet: "http://127.0.0.1:8095", recv: 5 * time.Second},
		{name: "recv window", env: map[string]string{"PERPGATE_BINANCE_RECV_WINDOW": "10000"},
			mainnet: "https://fapi.binance.com", testnet: "https://demo-fapi.binance.com", recv: 10 * time.Second},
		{name: "bad url", env: map[string]string{"PERPGATE_BINANCE_URL": "fapi.binance.com"}, err: "PERPGATE_BINANCE_URL"},
		{name: "bad recv window", env: map[string]string{"PERPGATE_BINANCE_RECV_WINDOW": "90000"}, err: "1 to 60000"},
		{name: "recv window not a number", env: map[string]string{"PERPGATE_BINANCE_RECV_WINDOW": "5s"}, err: "not a number"},
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
			if c.BaseURL(contract.Mainnet) != tt.mainnet || c.BaseURL(contract.Testnet) != tt.testnet || c.RecvWindow != tt.recv {
				t.Errorf("got %s %s %s", c.BaseURL(contract.Mainnet), c.BaseURL(contract.Testnet), c.RecvWindow)
			}
		})
	}
}
