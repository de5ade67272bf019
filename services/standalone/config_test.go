package standalone

import (
	"slices"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
)

func TestLoadConfigExchanges(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	c, err := LoadConfig(env(nil))
	if err != nil || len(c.Exchanges) != 0 || !c.serves(contract.Bybit) || !c.serves(contract.Paper) {
		t.Fatalf("default: %v, %v", c.Exchanges, err)
	}
	c, err = LoadConfig(env(map[string]string{"PERPGATE_EXCHANGES": "paper, Binance"}))
	if err != nil || !slices.Equal(c.Exchanges, []contract.Exchange{contract.Paper, contract.Binance}) || c.serves(contract.Bybit) || !c.serves(contract.Binance) {
		t.Fatalf("paper and binance: %v, %v", c.Exchanges, err)
	}
	_, err = LoadConfig(env(map[string]string{"PERPGATE_EXCHANGES": "paper,kraken,deribit"}))
	if err == nil || !strings.Contains(err.Error(), `"kraken"`) || !strings.Contains(err.Error(), `"deribit"`) || !strings.Contains(err.Error(), "paradex") {
		t.Fatalf("unknown exchanges: %v", err)
	}
}
