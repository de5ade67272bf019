package standalone

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/binance/sim"
)

// TestSecretsNeverLeak runs a full session (credentials created through the
// admin API for every exchange, every operation on Binance's simulator,
// signed placements on Hyperliquid, refused calls, listings) with every log
// line captured at debug level, and searches the logs and every response
// for the secret values and for the full API keys. All values are made up.
func TestSecretsNeverLeak(t *testing.T) {
	const (
		binanceKey    = "leakcheckBinanceApiKey0001"
		binanceSecret = "leakcheckBinanceSecret0001"
		wrongSecret   = "leakcheckWrongSecret0002"
		okxSecret     = "leakcheckOkxSecret0003"
		okxPass       = "leakcheckOkxPassphrase0004"
		bybitSecret   = "leakcheckBybitSecret0005"
		starkKey      = "0x5eaf5eaf5eaf5eaf5eaf5eaf5eaf5eaf"
		// A valid secp256k1 key made up for this test.
		hlAgentKey = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
		// An Aster API wallet key made up for this test.
		asterKey = "0x7a1f3c5e9b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a"
	)
	s := sim.New(sim.Config{Keys: map[string]string{binanceKey: binanceSecret}})
	upstream := httptest.NewServer(s)
	t.Cleanup(upstream.Close)
	g := startGateway(t, func(c *Config) {
		c.Binance.MainnetURL, c.Binance.TestnetURL = upstream.URL, upstream.URL
		c.Hyperliquid.URL = "http://127.0.0.1:1" // refused at once: signing still happens
		c.Aster.MainnetURL, c.Aster.TestnetURL = "http://127.0.0.1:1", "http://127.0.0.1:1"
	})
	acct := g.Bootstrap().AccountID
	var seen bytes.Buffer // every response body the session produced

	// admin calls the admin API; record adds the answer to what is searched
	// (not for key creation, the one answer that carries a full key).
	admin := func(method, path string, body any, record bool) map[string]any {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, g.AdminURL()+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+g.Bootstrap().AdminToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if record {
			seen.Write(raw)
		}
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		return out
	}
	credential := func(x contract.Exchange, env contract.Environment, secret map[string]string) string {
		t.Helper()
		out := admin(http.MethodPost, "/admin/v1/accounts/"+acct+"/credentials",
			map[string]any{"exchange": x, "env": env, "label": string(x), "secret": secret}, true)
		id, _ := out["credentialId"].(string)
		return id
	}
	creds := map[string]string{
		"binance": credential(contract.Binance, contract.Mainnet, map[string]string{"apiKey": binanceKey, "apiSecret": binanceSecret}),
		"wrong":   credential(contract.Binance, contract.Mainnet, map[string]string{"apiKey": binanceKey, "apiSecret": wrongSecret}),
		"okx":     credential(contract.OKX, contract.Mainnet, map[string]string{"apiKey": "okx-key", "apiSecret": okxSecret, "passphrase": okxPass}),
		"bybit":   credential(contract.Bybit, contract.Mainnet, map[string]string{"apiKey": "bybit-key", "apiSecret": bybitSecret}),
		"paradex": credential(contract.Paradex, contract.Mainnet, map[string]string{"accountAddress": "0x1234", "starkPrivateKey": starkKey}),
		"aster": credential(contract.Aster, contract.Mainnet, map[string]string{
			"userAddress": "0x00000000000000000000000000000000000000bb", "signerPrivateKey": asterKey}),
		"hyperliquid": credential(contract.Hyperliquid, contract.Mainnet, map[string]string{
			"accountAddress": "0x00000000000000000000000000000000000000aa", "agentPrivateKey": hlAgentKey}),
	}
	created := admin(http.MethodPost, "/admin/v1/accounts/"+acct+"/keys", map[string]any{"env": "live"}, false)
	liveKey, _ := created["key"].(string)
	admin(http.MethodGet, "/admin/v1/accounts/"+acct+"/credentials", nil, true)
	admin(http.MethodGet, "/admin/v1/accounts/"+acct+"/keys", nil, true)

	call := func(cred string, body map[string]any) {
		body["credentialId"] = cred
		r := g.call(liveKey, body)
		seen.Write(r.raw)
		for name, v := range r.header {
			seen.WriteString(name + ": " + strings.Join(v, ",") + "\n")
		}
	}
	order := map[string]any{"market": "BTC", "side": "BUY", "size": "0.01", "price": "20000", "clientOrderId": "leak-1"}
	for _, op := range contract.Operations {
		body := map[string]any{"operation": op.Name}
		switch op.Name {
		case "getOrderbook", "getMarkPrice", "getCandles", "getFundingRate", "getFeeInfo", "getFills",
			"cancelAllOrders", "closeAllPositions":
			body["market"] = "BTC"
		case "placeLimitOrder":
			for k, v := range order {
				body[k] = v
			}
		case "placeMarketOrder":
			body["market"], body["side"], body["size"] = "BTC", "BUY", "0.01"
		case "placeStopOrder":
			body["market"], body["side"], body["size"], body["triggerPrice"] = "BTC", "SELL", "0.01", "10000"
		case "placeBatchOrder":
			body["orders"] = []any{order}
		case "placeProtectionOrders":
			body["market"], body["side"], body["size"], body["entryPrice"], body["tpPercent"], body["slPercent"] = "BTC", "LONG", "0.01", "30000", 5, 5
		case "cancelOrder":
			body["market"], body["orderId"] = "BTC", "1"
		case "setLeverage":
			body["market"], body["leverage"] = "BTC", 3
		}
		call(creds["binance"], body)
	}
	for _, name := range []string{"wrong", "okx", "bybit", "paradex", "aster", "hyperliquid"} {
		call(creds[name], map[string]any{"operation": "testCredentials"})
		call(creds[name], map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "20000"})
	}
	admin(http.MethodDelete, "/admin/v1/credentials/"+creds["okx"], nil, true)

	secrets := []string{binanceSecret, wrongSecret, okxSecret, okxPass, bybitSecret, starkKey, hlAgentKey, asterKey, asterKey[2:]}
	logs := g.logs.String()
	if !strings.Contains(logs, "request done") || !strings.Contains(logs, creds["hyperliquid"]) {
		t.Fatalf("the logs do not show the session: %.500s", logs)
	}
	for _, where := range []struct{ name, text string }{{"logs", logs}, {"responses", seen.String()}} {
		for _, s := range secrets {
			if strings.Contains(where.text, s) {
				t.Errorf("the %s hold the secret value %s…", where.name, s[:8])
			}
		}
		if strings.Contains(where.text, liveKey[:13]) {
			t.Errorf("the %s hold more of the API key than its 12-character display", where.name)
		}
	}
}
