package standalone

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

// TestGetCredentials: getCredentials over /v1 and list_credentials over MCP
// list the credentials the key may use (environment, allowedExchanges,
// allowedCredentials applied; other accounts' never), with no secret.
func TestGetCredentials(t *testing.T) {
	g := startGateway(t)
	acct := g.newAccount(contract.TierBuilder)
	paperCred := g.newCredential(acct, contract.Paper, contract.Testnet, `{"startingBalance":"10000"}`)
	bybitTest := g.newCredential(acct, contract.Bybit, contract.Testnet, `{"apiKey":"made-up-key","apiSecret":"made-up-secret-xyz"}`)
	binanceMain := g.newCredential(acct, contract.Binance, contract.Mainnet, `{"apiKey":"made-up-key","apiSecret":"made-up-secret-xyz"}`)
	g.newCredential(g.newAccount(contract.TierBuilder), contract.Paper, contract.Testnet, `{"startingBalance":"1"}`)

	list := func(key string) []string {
		t.Helper()
		r := g.post(key, []byte(`{"operation":"getCredentials"}`))
		if r.status != http.StatusOK || r.body["success"] != true {
			t.Fatalf("status %d body %s", r.status, r.raw)
		}
		if strings.Contains(string(r.raw), "made-up-secret") {
			t.Fatalf("a secret in the answer: %s", r.raw)
		}
		var ids []string
		for _, c := range r.body["credentials"].([]any) {
			ids = append(ids, c.(map[string]any)["credentialId"].(string))
		}
		slices.Sort(ids)
		return ids
	}
	sorted := func(ids ...string) []string { slices.Sort(ids); return ids }

	testKey := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest})
	if got, want := list(testKey), sorted(paperCred, bybitTest); !slices.Equal(got, want) {
		t.Errorf("test key: %v, want %v", got, want)
	}
	if got, want := list(g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvLive})), []string{binanceMain}; !slices.Equal(got, want) {
		t.Errorf("live key: %v, want %v", got, want)
	}
	onlyBybit := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest, AllowedExchanges: []contract.Exchange{contract.Bybit}})
	if got, want := list(onlyBybit), []string{bybitTest}; !slices.Equal(got, want) {
		t.Errorf("allowedExchanges bybit: %v, want %v", got, want)
	}
	onlyPaper := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest, AllowedCredentials: []string{paperCred}})
	if got, want := list(onlyPaper), []string{paperCred}; !slices.Equal(got, want) {
		t.Errorf("allowedCredentials: %v, want %v", got, want)
	}

	r := g.call(testKey, map[string]any{"operation": "getCredentials", "credentialId": paperCred})
	if r.status != http.StatusBadRequest || r.code() != string(contract.CodeInvalidRequest) {
		t.Errorf("with a credentialId: status %d body %s", r.status, r.raw)
	}

	got := mustConnectMCP(t, g, "streamable", testKey).ok("list_credentials", map[string]any{})
	entries, _ := got["credentials"].([]any)
	if len(entries) != 2 {
		t.Fatalf("list_credentials: %v", got)
	}
	for _, e := range entries {
		m := e.(map[string]any)
		if m["env"] != "testnet" || m["label"] != "test" || (m["exchange"] != "paper" && m["exchange"] != "bybit") {
			t.Errorf("entry %v", m)
		}
	}
}

// wantRejected checks testCredentials' answer for a refused credential:
// valid:false with the venue's reason {code, message}, and not the secret.
func wantRejected(t *testing.T, tc map[string]any, x contract.Exchange, secret string) {
	t.Helper()
	reason, _ := tc["reason"].(map[string]any)
	code, _ := reason["code"].(string)
	msg, _ := reason["message"].(string)
	if tc["valid"] != false || tc["exchange"] != string(x) || code == "" || msg == "" {
		t.Errorf("testCredentials of a refused %s credential: %v", x, tc)
	}
	if b, _ := json.Marshal(tc); strings.Contains(string(b), secret) {
		t.Errorf("the secret is in the answer: %s", b)
	}
}
