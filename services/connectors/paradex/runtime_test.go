package paradex

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/paradex/sim"
)

// runtimeFixture runs the adapter inside the shared runtime (market
// resolution, rounding, idempotency), with the credential's secret served
// on NATS as the keys service would.
func runtimeFixture(t *testing.T) (*fixture, *connector.Runtime) {
	t.Helper()
	f := newFixture(t, sim.Config{})
	ns := testenv.EmbeddedNATS(t)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	cfg := connector.DefaultConfig()
	sub, err := nc.Subscribe(cfg.Subjects.Secret(contract.Paradex), func(m *nats.Msg) {
		info := f.cred.CredentialInfo
		info.AccountID = "acct-1"
		raw, _ := json.Marshal(contract.SecretResponse{Credential: info, Secret: f.cred.Secret})
		_ = m.Respond(raw)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	rt := connector.New(cfg, f.a, nc, connector.NewMemoryIdempotency(nil), slog.New(slog.NewTextHandler(io.Discard, nil)))
	return f, rt
}

func handle(t *testing.T, rt *connector.Runtime, op string, params string) (map[string]any, error) {
	t.Helper()
	res, err := rt.Handle(context.Background(), contract.ConnectorRequest{RequestID: "r", Operation: op, AccountID: "acct-1",
		Credential: contract.CredentialInfo{ID: "cred-1"}, Params: json.RawMessage(params)})
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(res)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out, nil
}

// TestThroughTheRuntime: canonical and loose market names resolve to
// Paradex's symbols (kPEPE for 1000PEPE), orders are rounded before they
// are signed, answers carry canonical names, and a repeated clientOrderId
// places nothing.
func TestThroughTheRuntime(t *testing.T) {
	f, rt := runtimeFixture(t)
	mark, err := handle(t, rt, contract.OpGetMarkPrice, `{"market":"BTC"}`)
	if err != nil || mark["markPrice"] == "" {
		t.Fatalf("mark: %v, %v", mark, err)
	}
	out, err := handle(t, rt, contract.OpPlaceLimitOrder, `{"market":"BTC-USD-PERP","side":"BUY","size":"0.0123456","price":"50000.07","clientOrderId":"rt-1"}`)
	if err != nil || out["market"] != "BTC-USD-PERP" || out["size"] != "0.01234" || out["price"] != "50000" || out["status"] != "OPEN" {
		t.Fatalf("limit: %v, %v", out, err)
	}
	again, err := handle(t, rt, contract.OpPlaceLimitOrder, `{"market":"BTC-USD-PERP","side":"BUY","size":"0.0123456","price":"50000.07","clientOrderId":"rt-1"}`)
	if err != nil || again["orderId"] != out["orderId"] || f.sim.Hits(http.MethodPost, "/v1/orders") != 1 {
		t.Fatalf("repeat: %v, %v; %d placements", again, err, f.sim.Hits(http.MethodPost, "/v1/orders"))
	}
	pepe, err := handle(t, rt, contract.OpPlaceLimitOrder, `{"market":"1000PEPE","side":"BUY","size":"1000000","price":"0.00001","clientOrderId":"rt-2"}`)
	if err != nil || pepe["market"] != "1000PEPE-USD-PERP" {
		t.Fatalf("1000PEPE: %v, %v", pepe, err)
	}
	orders, err := handle(t, rt, contract.OpGetOrders, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	markets := map[any]bool{}
	for _, o := range orders["orders"].([]any) {
		markets[o.(map[string]any)["market"]] = true
	}
	if !markets["BTC-USD-PERP"] || !markets["1000PEPE-USD-PERP"] || len(markets) != 2 {
		t.Fatalf("order markets %v", markets)
	}
}
