package standalone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/binance"
	binancesim "github.com/perpgate/perpgate/services/connectors/binance/sim"
	"github.com/perpgate/perpgate/services/connectors/bybit"
	bybitsim "github.com/perpgate/perpgate/services/connectors/bybit/sim"
	"github.com/perpgate/perpgate/services/connectors/okx"
	okxsim "github.com/perpgate/perpgate/services/connectors/okx/sim"
	"github.com/perpgate/perpgate/services/keys"
)

// The account-events table's kill scenario: two connector replicas of a
// venue share its private feed under a lease; the holder dies (its bus
// connection cut, no clean release) and a market order fills while no one
// follows the venue; the other replica holds the feed within 5 s and the
// gap's fill arrives once. The gateway serves paper only, so the venue's
// two replicas are the test's.

// killVenue is a venue simulator and how to make its adapter.
type killVenue struct {
	x       contract.Exchange
	secret  string // the credential's secret JSON
	adapter func() connector.Adapter
}

var killRows = []struct {
	name  string
	start func(t *testing.T) killVenue
}{
	{"binance", func(t *testing.T) killVenue {
		s := binancesim.New(binancesim.Config{Keys: map[string]string{simMainKey: simMainSecret}})
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		cfg := binance.DefaultConfig()
		cfg.MainnetURL, cfg.TestnetURL = srv.URL, srv.URL
		cfg.MainnetStreamURL = "ws" + strings.TrimPrefix(srv.URL, "http")
		return killVenue{x: contract.Binance, secret: `{"apiKey":"` + simMainKey + `","apiSecret":"` + simMainSecret + `"}`,
			adapter: func() connector.Adapter { return binance.NewAdapter(cfg, &http.Client{}) }}
	}},
	{"bybit", func(t *testing.T) killVenue {
		s := bybitsim.New(bybitsim.Config{Keys: map[string]string{bybitKey: bybitSecret}})
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		cfg := bybit.DefaultConfig()
		cfg.MainnetURL, cfg.TestnetURL, cfg.DemoURL = srv.URL, srv.URL, srv.URL
		return killVenue{x: contract.Bybit, secret: `{"apiKey":"` + bybitKey + `","apiSecret":"` + bybitSecret + `"}`,
			adapter: func() connector.Adapter { return bybit.NewAdapter(cfg, &http.Client{}) }}
	}},
	{"okx", func(t *testing.T) killVenue {
		s := okxsim.New(okxsim.Config{Keys: map[string]okxsim.Key{okxKey: {Secret: okxSecret, Passphrase: okxPass}}})
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		cfg := okx.DefaultConfig()
		cfg.MainnetURL, cfg.TestnetURL = srv.URL, srv.URL
		return killVenue{x: contract.OKX, secret: `{"apiKey":"` + okxKey + `","apiSecret":"` + okxSecret + `","passphrase":"` + okxPass + `"}`,
			adapter: func() connector.Adapter { return okx.NewAdapter(cfg, &http.Client{}) }}
	}},
	{"hyperliquid", startHyperliquidKill},
	{"paradex", startParadexKill},
	{"aster", startAsterKill},
}

// feedReplica is one connector replica of the test's: a runtime on its own
// bus connection whose adapter counts the private feeds it follows.
type feedReplica struct {
	nc        *nats.Conn
	following atomic.Int32
}

// countingFeeder passes calls to a venue's adapter and counts the feeds it
// follows now. Only the Adapter and AccountFeeder methods pass: the market
// streams stay off.
type countingFeeder struct {
	connector.Adapter
	r *feedReplica
}

func (c countingFeeder) FollowAccount(ctx context.Context, cred connector.Credential, ready func(), emit func(connector.AccountEvent)) error {
	c.r.following.Add(1)
	defer c.r.following.Add(-1)
	return c.Adapter.(connector.AccountFeeder).FollowAccount(ctx, cred, ready, emit)
}

func startReplica(t *testing.T, g *testGateway, v killVenue) *feedReplica {
	t.Helper()
	nc, err := g.Connect(bus.ConnectorUser(v.x))
	if err != nil {
		t.Fatal(err)
	}
	r := &feedReplica{nc: nc}
	rt := connector.New(connector.Config{Subjects: contract.NewSubjects(g.cfg.Edge.SubjectPrefix),
		Stream: connector.StreamConfig{LeaseTTL: time.Second}}, countingFeeder{Adapter: v.adapter(), r: r}, nc,
		connector.NewMemoryIdempotency(time.Now), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { _ = rt.Stop() }) })
	return r
}

// TestVenueAccountFeedMovesOnKill runs the kill scenario on each venue.
func TestVenueAccountFeedMovesOnKill(t *testing.T) {
	for _, row := range killRows {
		t.Run(row.name, func(t *testing.T) {
			v := row.start(t)
			g := startGateway(t, func(c *Config) { c.Exchanges = []contract.Exchange{contract.Paper} })
			acct := g.Bootstrap().AccountID
			key := g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive})
			cred := g.newCredential(acct, v.x, contract.Mainnet, v.secret)
			a, b := startReplica(t, g, v), startReplica(t, g, v)
			s := g.openSSE(key, credQuery(cred, "types", "fill"), nil)
			buy := func() string {
				t.Helper()
				r := g.call(key, map[string]any{"operation": "placeMarketOrder", "credentialId": cred, "market": "BTC", "side": "BUY", "size": "0.01"})
				if r.status != http.StatusOK {
					t.Fatalf("market order: %d %s", r.status, r.raw)
				}
				return r.body["orderId"].(string)
			}
			seen := map[string]int{}
			fillOf := func(id string) contract.Event {
				t.Helper()
				deadline := time.After(15 * time.Second)
				for {
					select {
					case ev := <-s.events:
						var f contract.FillEvent
						_ = json.Unmarshal(ev.Data, &f)
						if seen[f.FillID]++; seen[f.FillID] > 1 {
							t.Fatalf("fill %s of order %s came twice (%s)", f.FillID, f.OrderID, ev.Source)
						}
						if f.OrderID == id {
							return ev
						}
					case <-deadline:
						t.Fatalf("no fill of order %s within 15 s", id)
					}
				}
			}
			if ev := fillOf(buy()); ev.Source != contract.SourceStream {
				t.Errorf("a fill while the feed is held: source %q, want stream", ev.Source)
			}
			holder, other := a, b
			if b.following.Load() == 1 {
				holder, other = b, a
			}
			if holder.following.Load() != 1 || other.following.Load() != 0 {
				t.Fatalf("replicas follow %d and %d feeds, want one holder", a.following.Load(), b.following.Load())
			}
			g.waitReplicas(v.x, "placeMarketOrder", 2)
			holder.nc.Close()
			killed := time.Now()
			g.waitReplicas(v.x, "placeMarketOrder", 1)
			gap := buy()
			checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
				if other.following.Load() != 1 {
					return errors.New("the surviving replica does not follow the feed")
				}
				return nil
			})
			took := time.Since(killed)
			t.Logf("the surviving replica followed the feed %s after the kill", took)
			if took > 5*time.Second {
				t.Errorf("the feed moved %s after the kill, want within 5 s", took)
			}
			// No replica followed the venue when it filled: the new holder's
			// reconcile tells it.
			if ev := fillOf(gap); ev.Source != contract.SourceReconcile {
				t.Errorf("the gap's fill: source %q, want reconcile", ev.Source)
			}
			after := buy()
			fillOf(after)
			s.none(time.Second)
		})
	}
}

// waitReplicas waits until the bus routes operation name on exchange x to
// want connector replicas. A cut connection's subscriptions stay until the
// server has read the close, and a request routed to them in that moment
// is lost (the caller times out), which a real kill does too; the kill
// scenario's gap order is meant for the survivor.
func (g *testGateway) waitReplicas(x contract.Exchange, name string, want int) {
	g.t.Helper()
	op, _ := contract.Lookup(name)
	subject := contract.NewSubjects(g.cfg.Edge.SubjectPrefix).Operation(x, op)
	checkFor(g.t, 5*time.Second, time.Millisecond, func() error {
		if n := g.embedded.Interest(subject); n != want {
			return fmt.Errorf("%s has %d subscribers, want %d", subject, n, want)
		}
		return nil
	})
}
