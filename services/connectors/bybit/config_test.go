package bybit

import (
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
)

func TestLoadConfig(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	c, err := LoadConfig(env(nil))
	if err != nil || c.baseURL(contract.Mainnet, false) != DefaultMainnetURL || c.baseURL(contract.Testnet, false) != DefaultTestnetURL ||
		c.baseURL(contract.Testnet, true) != DefaultDemoURL || c.baseURL(contract.Mainnet, true) != DefaultMainnetURL {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	c, err = LoadConfig(env(map[string]string{"PERPGATE_BYBIT_URL": "http://127.0.0.1:8096/", "PERPGATE_BYBIT_RECV_WINDOW": "10000"}))
	if err != nil || c.baseURL(contract.Testnet, true) != "http://127.0.0.1:8096" || c.RecvWindow != 10*time.Second {
		t.Fatalf("override: %+v, %v", c, err)
	}
	_, err = LoadConfig(env(map[string]string{"PERPGATE_BYBIT_URL": "ftp://x", "PERPGATE_BYBIT_RECV_WINDOW": "0"}))
	if err == nil || !strings.Contains(err.Error(), "PERPGATE_BYBIT_URL") || !strings.Contains(err.Error(), "PERPGATE_BYBIT_RECV_WINDOW") {
		t.Fatalf("bad settings: %v", err)
	}
}
