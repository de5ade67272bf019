package hyperliquid

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

func TestWeights(t *testing.T) {
	info := []struct {
		typ  string
		want int
	}{
		{"l2Book", 2}, {"allMids", 2}, {"clearinghouseState", 2}, {"orderStatus", 2},
		{"userRole", 60}, {"meta", 20}, {"metaAndAssetCtxs", 20}, {"frontendOpenOrders", 20}, {"userFees", 20},
		{"userFillsByTime", 20},
		{"userFills", 20 + 2000/20},     // up to 2000 fills, +1 per 20
		{"candleSnapshot", 20 + 500/60}, // up to 500 candles, +1 per 60
	}
	for _, tc := range info {
		if got := infoWeight(tc.typ); got != tc.want {
			t.Errorf("info %s weighs %d, want %d", tc.typ, got, tc.want)
		}
	}
	for n, want := range map[int]int{1: 1, 39: 1, 40: 2, 79: 2, 80: 3} {
		if got := exchangeWeight(n); got != want {
			t.Errorf("an action of %d orders weighs %d, want %d", n, got, want)
		}
	}
}

// countingVenue answers every /info with status (and a body for 200) and
// counts the requests that reached it.
func countingVenue(t *testing.T, status int, body string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

var testCred = connector.Credential{CredentialInfo: contract.CredentialInfo{ID: "c", Exchange: contract.Hyperliquid, Environment: contract.Testnet},
	Secret: contract.Secret(`{"accountAddress":"0x5e9ee1089755c3435139848e47e6635505d5a13a","agentPrivateKey":"0x0123456789012345678901234567890123456789012345678901234567890123"}`)}

func upstreamReason(t *testing.T, err error) *contract.Error {
	t.Helper()
	ce, ok := contract.AsError(err)
	if !ok || ce.Code != contract.CodeExchangeError {
		t.Fatalf("want EXCHANGE_ERROR, got %v", err)
	}
	return ce
}

// TestIPWeightBudget: the connector spends the per-IP weight budget
// locally; a request that would overdraw it (beyond a short wait within
// its deadline) is answered UPSTREAM_RATE_LIMITED with retryAfter and
// never reaches the venue.
func TestIPWeightBudget(t *testing.T) {
	srv, hits := countingVenue(t, http.StatusOK, `{"BTC":"60000"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	t.Run("refused when the wait is long", func(t *testing.T) {
		a := NewAdapter(Config{URL: srv.URL, WeightPerMinute: 25}, srv.Client())
		before := hits.Load()
		if _, err := a.mid(ctx, testCred, "BTC"); err != nil { // allMids: 2
			t.Fatal(err)
		}
		var ctxs any
		if err := a.info(ctx, testCred, map[string]any{"type": "metaAndAssetCtxs"}, &ctxs); err != nil { // 2 + 20 fits in 25 ...
			t.Fatalf("second read refused early: %v", err)
		}
		err := a.info(ctx, testCred, map[string]any{"type": "metaAndAssetCtxs"}, &ctxs) // ... another 20 does not
		ce := upstreamReason(t, err)
		if ce.Reason != contract.ReasonUpstreamRateLimited || ce.RetryAfterSeconds < 30 || hits.Load() != before+2 {
			t.Fatalf("over budget: %+v after %d venue hits, want UPSTREAM_RATE_LIMITED, retryAfter ≥ 30 s, no third hit", ce, hits.Load()-before)
		}
	})
	t.Run("waits when the wait fits the deadline", func(t *testing.T) {
		a := NewAdapter(Config{URL: srv.URL, WeightPerMinute: 60}, srv.Client()) // 1 weight per second
		var ctxs any
		for range 3 {
			if err := a.info(ctx, testCred, map[string]any{"type": "metaAndAssetCtxs"}, &ctxs); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		if _, err := a.mid(ctx, testCred, "BTC"); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < time.Second {
			t.Fatalf("allMids after a spent budget went out after %v, want a wait of about 2 s", waited)
		}
	})
}

func TestUpstreamHTTPErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		reason contract.Reason
		retry  int
	}{
		{"429 is the per-IP limit", http.StatusTooManyRequests, contract.ReasonUpstreamRateLimited, 60},
		{"5xx is an outage", http.StatusBadGateway, contract.ReasonUpstreamUnavailable, 0},
		{"422 is a refused body", http.StatusUnprocessableEntity, contract.ReasonInvalidOrder, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := countingVenue(t, tc.status, "Failed to deserialize the JSON body")
			a := NewAdapter(Config{URL: srv.URL}, srv.Client())
			_, err := a.GetBalance(context.Background(), testCred)
			ce := upstreamReason(t, err)
			if ce.Reason != tc.reason || ce.ExchangeCode != fmt.Sprint(tc.status) || ce.RetryAfterSeconds != tc.retry {
				t.Fatalf("%+v, want reason %s code %d retryAfter %d", ce, tc.reason, tc.status, tc.retry)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		a := NewAdapter(Config{URL: "http://127.0.0.1:1"}, http.DefaultClient)
		_, err := a.GetBalance(context.Background(), testCred)
		if ce := upstreamReason(t, err); ce.Reason != contract.ReasonUpstreamUnavailable {
			t.Fatalf("%+v", ce)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatal("not a timeout")
		}
	})
}

// TestBase: without the override each environment has its own host; the
// override replaces both and decides nothing else.
func TestBase(t *testing.T) {
	main, test := testCred, testCred
	main.Environment = contract.Mainnet
	a := NewAdapter(Config{}, nil)
	if a.base(main) != MainnetURL || a.base(test) != TestnetURL {
		t.Fatalf("bases %s %s", a.base(main), a.base(test))
	}
	o := NewAdapter(Config{URL: "http://sim:8091/"}, nil)
	if o.base(main) != "http://sim:8091" || o.base(test) != "http://sim:8091" {
		t.Fatalf("override %s %s", o.base(main), o.base(test))
	}
	am, _ := o.account(main)
	at, _ := o.account(test)
	if !am.mainnet || at.mainnet {
		t.Fatalf("network from the credential: mainnet credential %v, testnet credential %v", am.mainnet, at.mainnet)
	}
}

// TestConfiguredSlippage: PERPGATE_HYPERLIQUID_SLIPPAGE bounds market
// orders: mid 93 500 with 2% gives an IOC buy at 95 370 (5% would be
// 98 175, the ccxt vector).
func TestConfiguredSlippage(t *testing.T) {
	venue := &vectorVenue{}
	srv := httptest.NewServer(venue)
	defer srv.Close()
	cfg, err := LoadConfig(func(k string) (string, bool) {
		v, ok := map[string]string{"PERPGATE_HYPERLIQUID_URL": srv.URL, "PERPGATE_HYPERLIQUID_SLIPPAGE": "0.02"}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	a := NewAdapter(cfg, srv.Client())
	ms, err := a.Markets(context.Background(), testCred)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.PlaceMarketOrder(context.Background(), testCred, connector.OrderRequest{Market: ms[0], Side: contract.Buy,
		Size: decimal.RequireFromString("0.001"), ClientOrderID: "m"}); err != nil {
		t.Fatal(err)
	}
	got := decodeExchange(t, venue.exchange[0]).action.(*OrderAction).Orders[0]
	if got.Price != "95370" || got.Type.Limit == nil || got.Type.Limit.TIF != "Ioc" {
		t.Fatalf("market order %+v %+v, want an IOC buy at 95370", got, got.Type.Limit)
	}
}
