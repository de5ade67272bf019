package standalone

import (
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
)

// TestEdgeDrainsInFlight: closing the edge while a request waits on its
// connector lets that request finish with its answer, then stops taking
// new ones.
func TestEdgeDrainsInFlight(t *testing.T) {
	// OKX's own connector is left out: the slow one below stands in for it.
	g := startGateway(t, func(c *Config) { c.Exchanges = []contract.Exchange{contract.Paper} })
	cred := g.newCredential(g.Bootstrap().AccountID, contract.OKX, contract.Testnet, `{"apiKey":"k","apiSecret":"s","passphrase":"p"}`)

	// A slow connector: it answers 300 ms after it took the request.
	nc, err := g.Connect("slow-connector")
	if err != nil {
		t.Fatal(err)
	}
	op, _ := contract.Lookup("getMarkPrice")
	taken := make(chan struct{}, 1)
	if _, err := nc.Subscribe(contract.NewSubjects("").Operation(contract.OKX, op), func(m *nats.Msg) {
		taken <- struct{}{}
		time.Sleep(300 * time.Millisecond)
		_ = m.Respond([]byte(`{"markPrice":"101.5","indexPrice":"101.4"}`))
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	answered := make(chan response, 1)
	go func() {
		answered <- g.call(g.Bootstrap().APIKey, map[string]any{"operation": "getMarkPrice", "credentialId": cred, "market": "BTC"})
	}()
	<-taken
	closed := make(chan error, 1)
	began := time.Now()
	go func() { closed <- g.edge.Close() }()

	r := <-answered
	if r.status != http.StatusOK || r.body["markPrice"] != "101.5" {
		t.Fatalf("in-flight request: %d %s", r.status, r.raw)
	}
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}
	if waited := time.Since(began); waited < 200*time.Millisecond {
		t.Errorf("close returned after %s, before the in-flight request finished", waited)
	}
	if resp, err := http.Post(g.URL()+"/v1", "application/json", nil); err == nil {
		resp.Body.Close()
		t.Fatalf("a closed edge still answers: %d", resp.StatusCode)
	}
}
