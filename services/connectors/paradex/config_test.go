package paradex

import (
	"strings"
	"testing"
)

func TestLoadConfig(t *testing.T) {
	c, err := LoadConfig(func(k string) (string, bool) {
		v, ok := map[string]string{"PERPGATE_PARADEX_URL": "http://127.0.0.1:8098/v1"}[k]
		return v, ok
	})
	if err != nil || c.MainnetURL != "http://127.0.0.1:8098/v1" || c.TestnetURL != c.MainnetURL {
		t.Fatalf("%+v, %v", c, err)
	}
	c, err = LoadConfig(func(string) (string, bool) { return "", false })
	if err != nil || c.MainnetURL != DefaultMainnetURL || c.TestnetURL != DefaultTestnetURL {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	_, err = LoadConfig(func(k string) (string, bool) { return "ftp://x", k == "PERPGATE_PARADEX_URL" })
	if err == nil || !strings.Contains(err.Error(), "PERPGATE_PARADEX_URL") {
		t.Fatalf("bad URL: %v", err)
	}
}
