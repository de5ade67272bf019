package standalone

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
	binancesim "github.com/perpgate/perpgate/services/connectors/binance/sim"
	bybitsim "github.com/perpgate/perpgate/services/connectors/bybit/sim"
	okxsim "github.com/perpgate/perpgate/services/connectors/okx/sim"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// The one account-events table every venue's private stream runs through
// (issue 31): a gateway whose connector follows the venue simulator's
// private stream, driven over /v1 and read over GET /v1/events. A venue
// is a row; the scenarios are the same for all.

// eventsVenue is a gateway wired to one venue's simulator.
type eventsVenue struct {
	*testGateway
	x       contract.Exchange
	key     string // live key allowed the credential
	cred    string // credential whose feed follows the simulator
	badCred string // same keys with a wrong secret: the venue refuses its login
	refusal string // words of the venue's own refusal of badCred
	eng     *paper.Engine
	btc     string // engine symbols of the markets "BTC" and "ETH" name
	eth     string
	// drop closes the simulator's private sockets.
	drop func()
	// hits counts the simulator's answers to GETs of these paths.
	hits func(paths ...string) int
	// polls are the order and position reads a polling protection watcher
	// makes.
	polls []string
	// logins counts the simulator's login attempts (refused ones too).
	logins func() int
	// watchesPairs: the gateway, not the venue, cancels a protection
	// pair's sibling (no ProtectionLinker), on events while the feed is
	// healthy.
	watchesPairs bool
	// canon is the canonical name of "BTC" on the venue; empty:
	// BTC-USDT-PERP.
	canon string
	// hashedClientIDs: the venue keeps a hash of the clientOrderId
	// (Hyperliquid's cloid), so order events cannot carry it.
	hashedClientIDs bool
}

// btcCanon is the canonical market "BTC" names on the venue.
func (v *eventsVenue) btcCanon() string {
	if v.canon != "" {
		return v.canon
	}
	return "BTC-USDT-PERP"
}

// eventsRows are the venues.
var eventsRows = []struct {
	name  string
	start func(t *testing.T) *eventsVenue
}{
	{"binance", startBinanceEvents},
	{"bybit", startBybitEvents},
	{"okx", startOKXEvents},
	{"hyperliquid", startHyperliquidEvents},
	{"paradex", startParadexEvents},
	{"aster", startAsterEvents},
}

// TestVenueAccountEvents runs the account-events scenarios on every
// venue's simulator through the edge.
func TestVenueAccountEvents(t *testing.T) {
	for _, row := range eventsRows {
		t.Run(row.name, func(t *testing.T) {
			v := row.start(t)
			for _, sc := range []struct {
				name string
				run  func(*testing.T, *eventsVenue)
			}{
				{"LimitPartialFillFillPositionCancel", eventsFollowAnOrder},
				{"ResumeWithLastEventID", eventsResume},
				{"SocketDroppedWithAFillInTheGap", eventsSocketDropped},
				{"ScopeFiltersMarkets", eventsScope},
				{"ProtectionWatcherDoesNotPoll", eventsNoPolling},
				{"RevokedKeyClosesWithinOneSecond", eventsRevoked},
				{"RefusedLoginIsAnErrorEventRetriedWithBackoff", eventsRefusedLogin},
			} {
				if !t.Run(sc.name, func(t *testing.T) { v.t = t; sc.run(t, v) }) {
					dumpFeedLogs(t, v.testGateway)
					return // later scenarios start from this one's state
				}
			}
		})
	}
}

// place calls placeLimitOrder and returns the order id.
func (v *eventsVenue) place(market, side string, size, price decimal.Decimal, clientID string) string {
	v.t.Helper()
	body := map[string]any{"operation": "placeLimitOrder", "credentialId": v.cred, "market": market, "side": side,
		"size": size.String(), "price": price.String()}
	if clientID != "" {
		body["clientOrderId"] = clientID
	}
	r := v.call(v.key, body)
	if r.status != http.StatusOK {
		v.t.Fatalf("place %s %s %s @ %s: %d %s", side, size, market, price, r.status, r.raw)
	}
	return r.body["orderId"].(string)
}

func (v *eventsVenue) cancel(market, id string) {
	v.t.Helper()
	r := v.call(v.key, map[string]any{"operation": "cancelOrder", "credentialId": v.cred, "market": market, "orderId": id})
	if r.status != http.StatusOK {
		v.t.Fatalf("cancel %s: %d %s", id, r.status, r.raw)
	}
}

// far is a buy price well under the mark, so the order rests.
func (v *eventsVenue) far(sym string) decimal.Decimal {
	v.t.Helper()
	m, err := v.eng.Market(sym)
	if err != nil {
		v.t.Fatal(err)
	}
	return m.MarkPrice.Mul(decimal.RequireFromString("0.8")).Div(m.TickSize).Floor().Mul(m.TickSize)
}

func (v *eventsVenue) minSize(sym string) decimal.Decimal {
	m, _ := v.eng.Market(sym)
	size := m.LotSize
	for size.Mul(m.MarkPrice).LessThan(decimal.NewFromInt(200)) {
		size = size.Mul(decimal.NewFromInt(10))
	}
	return size
}

// await reads events until every spec ("type field=value ...") matched
// one, in any order; other events are passed over. It returns the matches
// in spec order.
func (s *sseStream) await(within time.Duration, specs ...string) []contract.Event {
	s.t.Helper()
	got := make([]contract.Event, len(specs))
	left := len(specs)
	var seen []string
	deadline := time.After(within)
	for left > 0 {
		select {
		case ev := <-s.events:
			seen = append(seen, string(ev.Type)+" "+string(ev.Data))
			for i, spec := range specs {
				if got[i].ID == "" && matches(ev, spec) {
					got[i], left = ev, left-1
					break
				}
			}
		case <-deadline:
			var missing []string
			for i, spec := range specs {
				if got[i].ID == "" {
					missing = append(missing, spec)
				}
			}
			s.t.Fatalf("within %v no %q; saw:\n  %s", within, missing, strings.Join(seen, "\n  "))
		}
	}
	return got
}

func matches(ev contract.Event, spec string) bool {
	parts := strings.Fields(spec)
	if string(ev.Type) != parts[0] {
		return false
	}
	var data map[string]any
	_ = json.Unmarshal(ev.Data, &data)
	for _, kv := range parts[1:] {
		k, want, _ := strings.Cut(kv, "=")
		got := fmt.Sprint(data[k])
		if d, err := decimal.NewFromString(want); err == nil && k != "orderId" && k != "fillId" {
			if g, err := decimal.NewFromString(got); err == nil && g.Equal(d) {
				continue
			}
		}
		if got != want {
			return false
		}
	}
	return true
}

// eventsFollowAnOrder: a limit order that takes the top ask level and rests
// the rest, filled when the mark comes to it, then a resting order
// cancelled; the events carry the documented fields.
func eventsFollowAnOrder(t *testing.T, v *eventsVenue) {
	s := v.openSSE(v.key, credQuery(v.cred), nil)
	m, err := v.eng.Market(v.btc)
	if err != nil {
		t.Fatal(err)
	}
	// The price walk steps once a second: the book is read and the order
	// placed between two steps.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	book, err := v.eng.Orderbook(v.btc, 1)
	if err != nil {
		t.Fatal(err)
	}
	ask := book.Asks[0]
	extra := v.minSize(v.btc)
	size := ask.Size.Add(extra)
	// A client id every venue keeps as it is (OKX's clOrdId takes 1-32
	// letters and digits).
	id := v.place("BTC", "BUY", size, ask.Price, "evfollow1")
	canon := v.btcCanon()
	clientID := " clientOrderId=evfollow1"
	if v.hashedClientIDs {
		clientID = ""
	}
	first := s.await(15*time.Second,
		"order orderId="+id+" status=OPEN filledSize=0"+clientID+" side=BUY type=LIMIT market="+canon+" size="+size.String(),
		"fill orderId="+id+" liquidity=TAKER market="+canon+" size="+ask.Size.String()+" price="+ask.Price.String(),
		"order orderId="+id+" status=OPEN filledSize="+ask.Size.String(),
		"position market="+canon+" side=LONG size="+ask.Size.String())
	fill := eventData(t, first[1])
	requireFields(t, "fill event", fill, map[string]kind{"fillId": str, "orderId": str, "market": str, "side": str,
		"size": decStr, "price": decStr, "fee": decStr, "feeAsset": str, "liquidity": str, "timestamp": unixSec})
	if !dec(t, fill["fee"]).IsPositive() {
		t.Errorf("taker fill fee = %v, want the fee paid", fill["fee"])
	}
	for _, ev := range first {
		if ev.CredentialID != v.cred || ev.Exchange != v.x || ev.Time == 0 || ev.ReceivedAt == 0 || ev.ID == "" ||
			(ev.Source != contract.SourceStream && ev.Source != contract.SourceReconcile) {
			t.Fatalf("event envelope %+v lacks a documented field", ev)
		}
	}

	// The mark falls under the limit: the rest fills as maker.
	if _, err := v.eng.SetMarkPrice(v.btc, ask.Price.Sub(m.TickSize.Mul(decimal.NewFromInt(100)))); err != nil {
		t.Fatal(err)
	}
	s.await(15*time.Second, "fill orderId="+id+" liquidity=MAKER size="+extra.String(),
		"order orderId="+id+" status=FILLED filledSize="+size.String(), "position market="+canon+" side=LONG size="+size.String())

	rest := v.place("BTC", "BUY", extra, v.far(v.btc), "")
	s.await(15*time.Second, "order orderId="+rest+" status=OPEN filledSize=0")
	v.cancel("BTC", rest)
	s.await(15*time.Second, "order orderId="+rest+" status=CANCELLED")
}

// eventsResume: a client leaves, three events happen, it comes back with
// Last-Event-ID and gets exactly those three.
func eventsResume(t *testing.T, v *eventsVenue) {
	q := credQuery(v.cred, "types", "order")
	s := v.openSSE(v.key, q, nil)
	size, price := v.minSize(v.btc), v.far(v.btc)
	a := v.place("BTC", "BUY", size, price, "")
	last := s.await(15*time.Second, "order orderId="+a+" status=OPEN")[0]
	s.close()

	v.cancel("BTC", a)
	b := v.place("BTC", "BUY", size, price, "")
	// The feed publishes what the venue pushed; wait until the third is in.
	checkFor(t, 15*time.Second, 100*time.Millisecond, func() error {
		r := v.call(v.key, map[string]any{"operation": "getEvents", "credentialId": v.cred, "after": last.ID, "types": "order"})
		if n := len(r.body["events"].([]any)); n < 2 {
			return fmt.Errorf("%d events after the last one read", n)
		}
		return nil
	})
	v.cancel("BTC", b)

	back := v.openSSE(v.key, q, map[string]string{"Last-Event-ID": last.ID})
	back.expect("order orderId="+a+" status=CANCELLED", "order orderId="+b+" status=OPEN", "order orderId="+b+" status=CANCELLED")
	back.none(500 * time.Millisecond)
}

// eventsSocketDropped: the venue drops the private socket and an order
// fills before the feed is back; the fill is delivered once (from the
// reconnect's reconcile or the new socket) and later events flow.
func eventsSocketDropped(t *testing.T, v *eventsVenue) {
	s := v.openSSE(v.key, credQuery(v.cred, "types", "order,fill"), nil)
	m, _ := v.eng.Market(v.btc)
	size := v.minSize(v.btc)
	price := m.MarkPrice.Sub(m.TickSize.Mul(decimal.NewFromInt(20)))
	id := v.place("BTC", "BUY", size, price, "")
	s.await(15*time.Second, "order orderId="+id+" status=OPEN")

	v.drop()
	if _, err := v.eng.SetMarkPrice(v.btc, price.Sub(m.TickSize.Mul(decimal.NewFromInt(50)))); err != nil {
		t.Fatal(err)
	}
	s.await(20*time.Second, "fill orderId="+id+" size="+size.String(), "order orderId="+id+" status=FILLED")
	after := v.place("BTC", "BUY", size, v.far(v.btc), "")
	for _, ev := range s.await(15*time.Second, "order orderId="+after+" status=OPEN") {
		if ev.Type == contract.EventFill {
			t.Fatalf("a fill of %s after it was delivered: %s", id, ev.Data)
		}
	}
	deadline := time.After(time.Second)
	for {
		select {
		case ev := <-s.events:
			if ev.Type == contract.EventFill && strings.Contains(string(ev.Data), `"orderId":"`+id+`"`) {
				t.Fatalf("the gap's fill came twice: %s", ev.Data)
			}
			continue
		case <-deadline:
		}
		break
	}
	v.cancel("BTC", after)
}

// eventsScope: a key limited to BTC sees BTC's events and none of ETH's.
func eventsScope(t *testing.T, v *eventsVenue) {
	acct := v.Bootstrap().AccountID
	btcOnly := v.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvLive, Guards: contract.Guards{AllowedMarkets: []string{"BTC"}}})
	limited := v.openSSE(btcOnly, credQuery(v.cred, "types", "order"), nil)
	eth := v.place("ETH", "BUY", v.minSize(v.eth), v.far(v.eth), "")
	btc := v.place("BTC", "BUY", v.minSize(v.btc), v.far(v.btc), "")
	got := limited.await(15*time.Second, "order market="+v.btcCanon()+" orderId="+btc)
	limited.none(500 * time.Millisecond)
	if got[0].Market() != v.btcCanon() {
		t.Fatalf("limited key's event %s", got[0].Data)
	}
	v.cancel("ETH", eth)
	v.cancel("BTC", btc)
}

// eventsNoPolling: with a protection pair on a position and the feed
// healthy, the gateway reads no orders or positions from the venue; when
// the take-profit fires the stop-loss is cancelled all the same.
func eventsNoPolling(t *testing.T, v *eventsVenue) {
	s := v.openSSE(v.key, credQuery(v.cred, "types", "order,fill,position"), nil)
	closeAll := v.call(v.key, map[string]any{"operation": "closeAllPositions", "credentialId": v.cred, "market": "BTC"})
	if closeAll.status != http.StatusOK {
		t.Fatalf("closeAllPositions: %d %s", closeAll.status, closeAll.raw)
	}
	s.await(15*time.Second, "position market="+v.btcCanon()+" side=FLAT")
	size := v.minSize(v.btc)
	if r := v.call(v.key, map[string]any{"operation": "placeMarketOrder", "credentialId": v.cred, "market": "BTC", "side": "BUY", "size": size.String()}); r.status != http.StatusOK {
		t.Fatalf("market order: %d %s", r.status, r.raw)
	}
	m, _ := v.eng.Market(v.btc)
	prot := v.call(v.key, map[string]any{"operation": "placeProtectionOrders", "credentialId": v.cred, "market": "BTC", "side": "LONG",
		"size": size.String(), "entryPrice": m.MarkPrice.String(), "tpPercent": 2, "slPercent": 2})
	if prot.status != http.StatusOK {
		t.Fatalf("placeProtectionOrders: %d %s", prot.status, prot.raw)
	}
	s.await(15*time.Second, "position market="+v.btcCanon()+" side=LONG size="+size.String())
	time.Sleep(time.Second) // the placement's own read-backs are done
	before := v.hits(v.polls...)
	time.Sleep(5 * time.Second) // the watcher polls every 2 s without a healthy feed
	if n := v.hits(v.polls...) - before; n != 0 {
		t.Fatalf("%d order or position reads of %v in 5 s with a healthy feed, want none", n, v.polls)
	}
	if !v.watchesPairs {
		return
	}
	tp, sl := fmt.Sprint(prot.body["tpOrderId"]), fmt.Sprint(prot.body["slOrderId"])
	if _, err := v.eng.SetMarkPrice(v.btc, m.MarkPrice.Mul(decimal.RequireFromString("1.03"))); err != nil {
		t.Fatal(err)
	}
	evs := s.await(15*time.Second, "position market="+v.btcCanon()+" side=FLAT", "order orderId="+sl+" status=CANCELLED")
	if gap := evs[1].ReceivedAt - evs[0].ReceivedAt; gap > 2000 {
		t.Fatalf("the stop-loss %s was cancelled %d ms after the position closed (take-profit %s)", sl, gap, tp)
	}
	if n := v.hits(v.polls...) - before; n > 2 {
		t.Fatalf("%d order or position reads to settle the pair, want the cancel alone", n)
	}
}

// eventsRevoked: a revoked key's open stream closes within 1 s.
func eventsRevoked(t *testing.T, v *eventsVenue) {
	k, err := v.Keys().CreateKey(context.Background(), v.Bootstrap().AccountID, keys.KeyRequest{Env: contract.KeyEnvLive})
	if err != nil {
		t.Fatal(err)
	}
	s := v.openSSE(k.Key.Reveal(), credQuery(v.cred), nil)
	start := time.Now()
	if _, err := v.Keys().RevokeKey(context.Background(), k.Info.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.closed:
		t.Logf("stream closed %s after the revocation", time.Since(start))
	case <-time.After(time.Second):
		t.Fatal("the revoked key's stream is still open after 1 s")
	}
}

// eventsRefusedLogin: a credential the venue refuses gets one error event
// naming it and the venue's reason, and the connector retries with
// backoff, not in a loop.
func eventsRefusedLogin(t *testing.T, v *eventsVenue) {
	before := v.logins()
	s := v.openSSE(v.key, credQuery(v.badCred), nil)
	ev := s.await(15*time.Second, "error code=AUTHENTICATION_FAILED")[0]
	msg := eventData(t, ev)["message"].(string)
	if !strings.Contains(msg, v.badCred) || !strings.Contains(strings.ToLower(msg), strings.ToLower(v.refusal)) {
		t.Fatalf("error event %q does not name credential %s and the venue's %q", msg, v.badCred, v.refusal)
	}
	if ev.CredentialID != v.badCred || ev.Exchange != v.x {
		t.Fatalf("error event envelope %+v", ev)
	}
	time.Sleep(6 * time.Second)
	n := v.logins() - before
	t.Logf("%d login attempts in the 6 s after the refusal", n)
	if n < 2 || n > 4 {
		t.Fatalf("%d login attempts in some 6 s after a refusal, want a retry or two (backoff from 5 s)", n)
	}
	s.none(200 * time.Millisecond) // one error event, not one per attempt
}

// richAccount gives the simulator's account room to take a book level.
func richAccount(t *testing.T, eng *paper.Engine, acct string) {
	t.Helper()
	if _, err := eng.EnsureAccount(acct, decimal.NewFromInt(100_000_000)); err != nil {
		t.Fatal(err)
	}
}

func simHits(get func(method, path string) int) func(paths ...string) int {
	return func(paths ...string) int {
		n := 0
		for _, p := range paths {
			n += get(http.MethodGet, p)
		}
		return n
	}
}

func startBinanceEvents(t *testing.T) *eventsVenue {
	s := binancesim.New(binancesim.Config{Keys: map[string]string{simMainKey: simMainSecret}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	richAccount(t, s.Engine(), simMainKey)
	g := startGateway(t, func(c *Config) {
		c.Binance.MainnetURL, c.Binance.TestnetURL = srv.URL, srv.URL
		c.Binance.MainnetStreamURL = "ws" + strings.TrimPrefix(srv.URL, "http")
	})
	acct := g.Bootstrap().AccountID
	return &eventsVenue{testGateway: g, x: contract.Binance, eng: s.Engine(), btc: "BTCUSDT", eth: "ETHUSDT",
		key:     g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive}),
		cred:    g.newCredential(acct, contract.Binance, contract.Mainnet, `{"apiKey":"`+simMainKey+`","apiSecret":"`+simMainSecret+`"}`),
		badCred: g.newCredential(acct, contract.Binance, contract.Mainnet, `{"apiKey":"`+simMainKey+`","apiSecret":"wrong-secret"}`),
		refusal: "Signature for this request is not valid",
		drop:    s.DropPrivate, hits: simHits(s.Hits),
		polls:        []string{"/fapi/v1/openOrders", "/fapi/v1/openAlgoOrders", "/fapi/v3/positionRisk"},
		logins:       func() int { return s.Hits(http.MethodGet, "/fapi/v1/accountConfig") },
		watchesPairs: true}
}

func startBybitEvents(t *testing.T) *eventsVenue {
	s := bybitsim.New(bybitsim.Config{Keys: map[string]string{bybitKey: bybitSecret}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	richAccount(t, s.Engine(), bybitKey)
	g := startGateway(t, func(c *Config) { c.Bybit.MainnetURL, c.Bybit.TestnetURL, c.Bybit.DemoURL = srv.URL, srv.URL, srv.URL })
	acct := g.Bootstrap().AccountID
	return &eventsVenue{testGateway: g, x: contract.Bybit, eng: s.Engine(), btc: "BTCUSDT", eth: "ETHUSDT",
		key:     g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive}),
		cred:    g.newCredential(acct, contract.Bybit, contract.Mainnet, `{"apiKey":"`+bybitKey+`","apiSecret":"`+bybitSecret+`"}`),
		badCred: g.newCredential(acct, contract.Bybit, contract.Mainnet, `{"apiKey":"`+bybitKey+`","apiSecret":"wrong-secret"}`),
		refusal: "Request not authorized",
		drop:    s.DropPrivate, hits: simHits(s.Hits),
		polls:        []string{"/v5/order/realtime", "/v5/position/list"},
		logins:       s.PrivateDials,
		watchesPairs: true}
}

func startOKXEvents(t *testing.T) *eventsVenue {
	s := okxsim.New(okxsim.Config{Keys: map[string]okxsim.Key{okxKey: {Secret: okxSecret, Passphrase: okxPass}}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	richAccount(t, s.Engine(), okxKey)
	g := startGateway(t, func(c *Config) { c.OKX.MainnetURL, c.OKX.TestnetURL = srv.URL, srv.URL })
	acct := g.Bootstrap().AccountID
	return &eventsVenue{testGateway: g, x: contract.OKX, eng: s.Engine(), btc: "BTC-USDT-SWAP", eth: "ETH-USDT-SWAP",
		key:     g.newKey("", keys.KeyRequest{Env: contract.KeyEnvLive}),
		cred:    g.newCredential(acct, contract.OKX, contract.Mainnet, `{"apiKey":"`+okxKey+`","apiSecret":"`+okxSecret+`","passphrase":"`+okxPass+`"}`),
		badCred: g.newCredential(acct, contract.OKX, contract.Mainnet, `{"apiKey":"`+okxKey+`","apiSecret":"wrong-secret","passphrase":"`+okxPass+`"}`),
		refusal: "Invalid sign",
		drop:    s.DropPrivate, hits: simHits(s.Hits),
		polls:  []string{"/api/v5/trade/orders-pending", "/api/v5/trade/orders-algo-pending", "/api/v5/account/positions"},
		logins: s.PrivateDials}
}

// dumpFeedLogs shows the account feed's log lines of a failed scenario.
func dumpFeedLogs(t *testing.T, g *testGateway) {
	for _, l := range strings.Split(g.logs.String(), "\n") {
		if strings.Contains(l, "account feed") || strings.Contains(l, "account-feed") {
			t.Log(l)
		}
	}
}
