package paradex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
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

// TestUnsignedVectorsMatchOurRequests: for the vectors that carry only the
// JWT (cancel, cancel all, set leverage), the adapter sends the same
// method, path, query and JSON body as ccxt did.
func TestUnsignedVectorsMatchOurRequests(t *testing.T) {
	s := sim.New(sim.Config{Accounts: map[string]string{testAddress: testPub}})
	var mu sync.Mutex
	var reqs []recorded
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, recorded{r.Method, r.URL.RequestURI(), r.Header.Clone(), raw})
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(raw))
		s.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.MainnetURL = srv.URL + "/v1"
	a := NewAdapter(cfg, srv.Client())
	cred := credential("cred-v", testAddress, testKey)
	ctx := context.Background()
	m := connector.Market{Canonical: "BTC-USD-PERP", Native: "BTC-USD-PERP"}
	// An open order, so cancel-all has something to cancel.
	if _, err := a.PlaceLimitOrder(ctx, cred, connector.OrderRequest{Market: m, Type: connector.Limit, Side: contract.Buy, Size: d("0.01"), Price: d("50000"), ClientOrderID: "v-1"}); err != nil {
		t.Fatal(err)
	}
	ops := map[string]func(){
		"cancel":       func() { _ = a.CancelOrder(ctx, cred, "1735689000000201700000000001", nil) },
		"cancel_all":   func() { _, _ = a.CancelAllOrders(ctx, cred, m) },
		"set_leverage": func() { _, _ = a.SetLeverage(ctx, cred, m, 10) },
	}
	for _, v := range testenvVectors(t) {
		op := v.Name[len("paradex/mainnet/"):]
		run, ok := ops[op]
		if v.Env != "mainnet" || !ok {
			continue
		}
		t.Run(op, func(t *testing.T) {
			mu.Lock()
			n := len(reqs)
			mu.Unlock()
			run()
			mu.Lock()
			defer mu.Unlock()
			want := strings.TrimSuffix(strings.TrimPrefix(v.Request.URL, "https://api.prod.paradex.trade"), "?")
			for _, r := range reqs[n:] {
				if r.method != v.Request.Method || r.path != want {
					continue
				}
				if v.BodyText() != "" {
					var got, exp any
					_ = json.Unmarshal(r.body, &got)
					_ = json.Unmarshal([]byte(v.BodyText()), &exp)
					if fmt.Sprint(got) != fmt.Sprint(exp) {
						t.Fatalf("body %s, ccxt sent %s", r.body, v.BodyText())
					}
				}
				return
			}
			t.Fatalf("no %s %s among %d requests", v.Request.Method, want, len(reqs)-n)
		})
	}
}

func testenvVectors(t *testing.T) []testenv.Vector {
	return testenv.LoadVectors(t, "testdata/vectors.json", 18)
}
