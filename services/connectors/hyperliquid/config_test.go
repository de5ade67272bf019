package hyperliquid

import (
	"strings"
	"testing"
)

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
		check   func(Config) bool
	}{
		{"defaults", nil, "", func(c Config) bool {
			return c.URL == "" && c.Slippage.String() == "0.05" && c.WeightPerMinute == 1200
		}},
		{"override", map[string]string{"PERPGATE_HYPERLIQUID_URL": "http://127.0.0.1:8091", "PERPGATE_HYPERLIQUID_SLIPPAGE": "0.02"}, "",
			func(c Config) bool { return c.URL == "http://127.0.0.1:8091" && c.Slippage.String() == "0.02" }},
		{"bad url", map[string]string{"PERPGATE_HYPERLIQUID_URL": "ftp://x"}, "PERPGATE_HYPERLIQUID_URL", nil},
		{"bad slippage", map[string]string{"PERPGATE_HYPERLIQUID_SLIPPAGE": "0.9"}, "PERPGATE_HYPERLIQUID_SLIPPAGE", nil},
		{"bad weight", map[string]string{"PERPGATE_HYPERLIQUID_WEIGHT_PER_MINUTE": "x"}, "PERPGATE_HYPERLIQUID_WEIGHT_PER_MINUTE", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(c) {
				t.Fatalf("config %+v, err %v", c, err)
			}
		})
	}
}
