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
	c, err = LoadConfig(func(k string) (string, bool) { return "60000", k == "PERPGATE_PARADEX_AUTH_EXPIRY" })
	if err != nil || c.AuthExpiry.Seconds() != 60 {
		t.Fatalf("auth expiry: %v, %v", c.AuthExpiry, err)
	}
	for _, v := range []string{"5000", "soon"} {
		if _, err := LoadConfig(func(k string) (string, bool) { return v, k == "PERPGATE_PARADEX_AUTH_EXPIRY" }); err == nil ||
			!strings.Contains(err.Error(), "PERPGATE_PARADEX_AUTH_EXPIRY") {
			t.Errorf("auth expiry %q: %v", v, err)
		}
	}
	_, err = LoadConfig(func(k string) (string, bool) { return "ftp://x", k == "PERPGATE_PARADEX_URL" })
	if err == nil || !strings.Contains(err.Error(), "PERPGATE_PARADEX_URL") {
		t.Fatalf("bad URL: %v", err)
	}
}
