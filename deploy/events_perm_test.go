package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// checkAccountEvents opens GET /v1/events at the edge and places an order:
// its event must come through, which needs paper-venue's user to publish
// its private stream, connector-paper's to follow it and publish into the
// event stream, and the edge's user to read it (deploy/nats.conf).
func checkAccountEvents(t *testing.T, edgeURL, key, cred string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, edgeURL+"/v1/events?types=order&credentialId="+cred, nil)
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/events: %d", resp.StatusCode)
	}
	body := `{"operation":"placeLimitOrder","market":"BTC","side":"BUY","size":"0.01","price":"1001","credentialId":"` + cred + `"}`
	preq, _ := http.NewRequest(http.MethodPost, edgeURL+"/v1", strings.NewReader(body))
	preq.Header.Set("X-API-Key", key)
	presp, err := http.DefaultClient.Do(preq)
	if err != nil {
		t.Fatal(err)
	}
	var placed struct {
		OrderID string `json:"orderId"`
	}
	_ = json.NewDecoder(presp.Body).Decode(&placed)
	presp.Body.Close()
	if presp.StatusCode != http.StatusOK || placed.OrderID == "" {
		t.Fatalf("placeLimitOrder: %d", presp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type string `json:"type"`
			Data struct {
				OrderID string `json:"orderId"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Type == "order" && ev.Data.OrderID == placed.OrderID {
			return
		}
	}
	t.Fatalf("the order's event never came (stream ended: %v)", sc.Err())
}
