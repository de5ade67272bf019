package paradex

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paradex/sim"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
)

// recorded is one request the adapter sent.
type recorded struct {
	method, path string
	header       http.Header
	body         []byte
}

// TestRequestsOnTheWire checks what the adapter sends: auth timestamps in
// seconds with the expiry after them, order bodies with decimal strings,
// signature_timestamp in ms, no price on market orders, REDUCE_ONLY as a
// flag, and signatures that verify over what was sent.
func TestRequestsOnTheWire(t *testing.T) {
	s := sim.New(sim.Config{Accounts: map[string]string{testAddress: testPub}})
	var mu sync.Mutex
	var reqs []recorded
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, recorded{r.Method, r.URL.Path, r.Header.Clone(), raw})
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(raw))
		s.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.MainnetURL = srv.URL + "/v1"
	a := NewAdapter(cfg, srv.Client())
	cred := credential("cred-w", testAddress, testKey)
	ctx := context.Background()
	list, err := a.Markets(ctx, cred)
	if err != nil {
		t.Fatal(err)
	}
	var m connector.Market
	for _, x := range list {
		if x.Native == "BTC-USD-PERP" {
			m = x
		}
	}
	start := time.Now()
	if _, err := a.PlaceMarketOrder(ctx, cred, connector.OrderRequest{Market: m, Type: connector.MarketType, Side: contract.Buy, Size: d("0.01"), ClientOrderID: "w-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PlaceStopOrder(ctx, cred, connector.OrderRequest{Market: m, Side: contract.Sell, Size: d("0.01"), TriggerPrice: d("50000.5"), ReduceOnly: true, ClientOrderID: "w-2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PlaceLimitOrder(ctx, cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Sell, Size: d("0.01"), Price: d("150000.1"), PostOnly: true, ClientOrderID: "w-3"}); err != nil {
		t.Fatal(err)
	}
	key, _ := stark.ParseKey(testKey)
	addr, _ := stark.ParseFelt(testAddress)
	mu.Lock()
	defer mu.Unlock()
	auths, orders := 0, 0
	for _, r := range reqs {
		switch {
		case r.method == http.MethodPost && r.path == "/v1/auth":
			auths++
			ts, _ := strconv.ParseInt(r.header.Get("PARADEX-TIMESTAMP"), 10, 64)
			exp, _ := strconv.ParseInt(r.header.Get("PARADEX-SIGNATURE-EXPIRATION"), 10, 64)
			if d := ts - start.Unix(); d < -2 || d > 5 || exp != ts+180 {
				t.Errorf("auth timestamp %d, expiration %d: want seconds now and now+180", ts, exp)
			}
			if r.header.Get("PARADEX-STARKNET-ACCOUNT") != testAddress || len(r.body) != 0 {
				t.Errorf("auth account %q, body %q", r.header.Get("PARADEX-STARKNET-ACCOUNT"), r.body)
			}
			rr, ss, err := stark.ParseSignature(r.header.Get("PARADEX-STARKNET-SIGNATURE"))
			if err != nil || !stark.Verify(key.PublicKey(), stark.AuthHash(stark.ChainMainnet, addr, ts, exp), rr, ss) {
				t.Errorf("auth signature does not verify: %v", err)
			}
		case r.method == http.MethodPost && r.path == "/v1/orders":
			orders++
			var raw map[string]any
			var o stark.OrderRequest
			if json.Unmarshal(r.body, &raw) != nil || json.Unmarshal(r.body, &o) != nil {
				t.Fatalf("order body %s", r.body)
			}
			if d := o.SignatureTimestamp - start.UnixMilli(); d < -2000 || d > 5000 {
				t.Errorf("signature_timestamp %d is not now in ms", o.SignatureTimestamp)
			}
			if _, isString := raw["size"].(string); !isString {
				t.Errorf("size is not a string: %s", r.body)
			}
			switch o.ClientID {
			case "w-1":
				if _, has := raw["price"]; has || o.Type != "MARKET" || o.Side != "BUY" || o.Instruction != "GTC" {
					t.Errorf("market order body %s", r.body)
				}
			case "w-2":
				if o.Type != "STOP_MARKET" || o.TriggerPrice != "50000.5" || len(o.Flags) != 1 || o.Flags[0] != "REDUCE_ONLY" || o.Side != "SELL" {
					t.Errorf("stop order body %s", r.body)
				}
			case "w-3":
				if o.Type != "LIMIT" || o.Price != "150000.1" || o.Instruction != "POST_ONLY" || o.Size != "0.01" {
					t.Errorf("limit order body %s", r.body)
				}
			}
			msg, err := o.SignedMessage()
			rr, ss, err2 := stark.ParseSignature(o.Signature)
			if err != nil || err2 != nil || !stark.Verify(key.PublicKey(), stark.OrderHash(stark.ChainMainnet, addr, msg), rr, ss) {
				t.Errorf("order %s: signature does not verify", o.ClientID)
			}
		}
		if auth := r.header.Get("Authorization"); r.path != "/v1/auth" && len(r.path) > 3 && auth != "" && auth[:7] != "Bearer " {
			t.Errorf("%s: Authorization %q", r.path, auth[:7])
		}
	}
	if auths != 1 || orders != 3 {
		t.Fatalf("%d auth calls and %d orders, want 1 and 3", auths, orders)
	}
}
