package standalone

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/shopspring/decimal"
)

// sseStream is an open GET /v1/events, read line by line in the background.
type sseStream struct {
	t        *testing.T
	resp     *http.Response
	events   chan contract.Event
	comments chan string
	closed   chan struct{} // the server ended the stream
	cancel   context.CancelFunc
}

// openSSE opens /v1/events with query q, the key in X-API-Key (or, when
// inQuery, as api_key) and any extra headers; it fails the test unless
// the answer is a 200 event stream.
func (g *testGateway) openSSE(key string, q url.Values, hdr map[string]string) *sseStream {
	g.t.Helper()
	s, r := g.trySSE(key, q, hdr)
	if s == nil {
		g.t.Fatalf("GET /v1/events?%s: %d %s", q.Encode(), r.status, r.raw)
	}
	return s
}

// trySSE opens /v1/events; when it is refused it returns the JSON answer.
func (g *testGateway) trySSE(key string, q url.Values, hdr map[string]string) (*sseStream, response) {
	g.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.URL()+"/v1/events?"+q.Encode(), nil)
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		g.t.Fatalf("GET /v1/events: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		var r response
		r.status, r.header = resp.StatusCode, resp.Header
		dec := json.NewDecoder(resp.Body)
		if err := dec.Decode(&r.body); err != nil {
			g.t.Fatalf("GET /v1/events: %d answer is not JSON: %v", resp.StatusCode, err)
		}
		r.raw, _ = json.Marshal(r.body)
		return nil, r
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		g.t.Fatalf("Content-Type = %q, want text/event-stream", ct)
	}
	s := &sseStream{t: g.t, resp: resp, events: make(chan contract.Event, 1000), comments: make(chan string, 100),
		closed: make(chan struct{}), cancel: cancel}
	go s.read()
	g.t.Cleanup(s.close)
	return s, response{status: resp.StatusCode, header: resp.Header}
}

func (s *sseStream) read() {
	defer close(s.closed)
	sc := bufio.NewScanner(s.resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var id string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
			s.comments <- line
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			var ev contract.Event
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
				s.t.Errorf("event data is not an event: %q", line)
				continue
			}
			if ev.ID != id {
				s.t.Errorf("SSE id %q differs from the event's id %q", id, ev.ID)
			}
			s.events <- ev
		}
	}
}

func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next returns the next event, failing the test after wait.
func (s *sseStream) next(wait time.Duration) contract.Event {
	s.t.Helper()
	select {
	case ev := <-s.events:
		return ev
	case <-time.After(wait):
		s.t.Fatalf("no event within %s", wait)
	}
	return contract.Event{}
}

// none fails the test if an event arrives within wait.
func (s *sseStream) none(wait time.Duration) {
	s.t.Helper()
	select {
	case ev := <-s.events:
		s.t.Fatalf("unexpected event %s %s", ev.Type, ev.Data)
	case <-time.After(wait):
	}
}

// expect reads one event per wanted line "type" or "type field=value ...".
func (s *sseStream) expect(want ...string) []contract.Event {
	s.t.Helper()
	var got []contract.Event
	for _, w := range want {
		ev := s.next(5 * time.Second)
		got = append(got, ev)
		parts := strings.Fields(w)
		if string(ev.Type) != parts[0] {
			s.t.Fatalf("event %d is %s %s, want %s", len(got), ev.Type, ev.Data, w)
		}
		var data map[string]any
		_ = json.Unmarshal(ev.Data, &data)
		for _, kv := range parts[1:] {
			k, v, _ := strings.Cut(kv, "=")
			if fmt.Sprint(data[k]) != v {
				s.t.Fatalf("event %d %s: %s = %v, want %s (data %s)", len(got), ev.Type, k, data[k], v, ev.Data)
			}
		}
	}
	return got
}

func eventData(t *testing.T, ev contract.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ev.Data, &m); err != nil {
		t.Fatalf("event data %s: %v", ev.Data, err)
	}
	return m
}

func credQuery(cred string, kv ...string) url.Values {
	q := url.Values{"credentialId": {cred}}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return q
}

// richPaper is a gateway serving paper only, with a paper credential rich
// enough to take several book levels at once, and BTC's mark and tick.
func richPaper(t *testing.T, mutate ...func(*Config)) (*testGateway, string, decimal.Decimal, decimal.Decimal) {
	g := startGateway(t, append([]func(*Config){func(c *Config) { c.Exchanges = []contract.Exchange{contract.Paper} }}, mutate...)...)
	cred := g.newCredential(g.Bootstrap().AccountID, contract.Paper, contract.Testnet, `{"startingBalance":"100000000"}`)
	g.setMark("BTC-USD-PERP", "50000")
	g.setMark("ETH-USD-PERP", "3000")
	m, err := g.PaperEngine().Market("BTC-USD-PERP")
	if err != nil {
		t.Fatal(err)
	}
	return g, cred, m.MarkPrice, m.TickSize
}

func TestEventsSSEFollowAnOrderThroughPartialFillFillAndCancel(t *testing.T) {
	g, cred, mark, tick := richPaper(t)
	key := g.Bootstrap().APIKey
	s := g.openSSE(key, credQuery(cred), nil)
	// The price walk steps once a second, by about 50 ticks: the mark is set
	// and the order placed within one second, so no step comes between.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	g.setMark("BTC-USD-PERP", mark.String())

	price := mark.Add(tick.Mul(decimal.NewFromInt(2)))
	placed := g.call(key, map[string]any{"operation": "placeLimitOrder", "credentialId": cred, "market": "BTC", "side": "BUY",
		"size": "20", "price": price.String(), "clientOrderId": "ev-partial-1"})
	if placed.status != http.StatusOK {
		t.Fatalf("place: %d %s", placed.status, placed.raw)
	}
	id := placed.body["orderId"].(string)
	evs := s.expect(
		"order orderId="+id+" status=OPEN filledSize=0 clientOrderId=ev-partial-1 market=BTC-USD-PERP side=BUY type=LIMIT size=20",
		"fill orderId="+id+" liquidity=TAKER feeAsset=USD clientOrderId=ev-partial-1",
		"position market=BTC-USD-PERP side=LONG", "balance asset=USD",
		"fill orderId="+id+" liquidity=TAKER", "position side=LONG", "balance",
		"order orderId="+id+" status=OPEN")
	partial := eventData(t, evs[len(evs)-1])
	if filled := dec(t, partial["filledSize"]); !filled.IsPositive() || !filled.LessThan(decimal.NewFromInt(20)) {
		t.Fatalf("after the taker fills the order is filled %s of 20, want a part", filled)
	}
	fill := eventData(t, evs[1])
	requireFields(t, "fill event", fill, map[string]kind{"fillId": str, "orderId": str, "market": str, "side": str,
		"size": decStr, "price": decStr, "fee": decStr, "feeAsset": str, "liquidity": str, "timestamp": unixSec})
	if !dec(t, fill["fee"]).IsPositive() {
		t.Errorf("fill fee = %v, want the taker fee", fill["fee"])
	}
	for _, ev := range evs {
		if ev.CredentialID != cred || ev.Exchange != contract.Paper || ev.Source != contract.SourceStream || ev.Time == 0 || ev.ReceivedAt == 0 || ev.ID == "" {
			t.Fatalf("event envelope %+v lacks a documented field", ev)
		}
	}

	// The mark falls through the limit: the rest fills as maker.
	g.setMark("BTC-USD-PERP", mark.Sub(tick.Mul(decimal.NewFromInt(10))).String())
	s.expect("fill orderId="+id+" liquidity=MAKER", "position side=LONG size=20", "balance", "order orderId="+id+" status=FILLED filledSize=20")

	far := g.call(key, map[string]any{"operation": "placeLimitOrder", "credentialId": cred, "market": "BTC", "side": "SELL", "size": "1", "price": "90000"})
	farID := far.body["orderId"].(string)
	if r := g.call(key, map[string]any{"operation": "cancelOrder", "credentialId": cred, "market": "BTC", "orderId": farID}); r.status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.status, r.raw)
	}
	s.expect("order orderId="+farID+" status=OPEN", "order orderId="+farID+" status=CANCELLED")
}

func TestEventsSSEResumeDeliversExactlyTheMissedEvents(t *testing.T) {
	g, cred, _, _ := richPaper(t, func(c *Config) { c.Edge.EventKeepAlive = 200 * time.Millisecond })
	key := g.Bootstrap().APIKey
	place := func(price string) string {
		r := g.call(key, map[string]any{"operation": "placeLimitOrder", "credentialId": cred, "market": "BTC", "side": "BUY", "size": "0.01", "price": price})
		if r.status != http.StatusOK {
			t.Fatalf("place: %d %s", r.status, r.raw)
		}
		return r.body["orderId"].(string)
	}
	s := g.openSSE(key, credQuery(cred), nil)
	select { // an idle stream gets its keep-alive comment
	case c := <-s.comments:
		if c != ": keep-alive" {
			t.Errorf("comment %q", c)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no keep-alive comment on an idle stream")
	}
	first := place("40000")
	last := s.expect("order orderId=" + first + " status=OPEN")[0]
	s.close()

	// Three events while the client is away.
	second := place("40001")
	g.call(key, map[string]any{"operation": "cancelOrder", "credentialId": cred, "market": "BTC", "orderId": second})
	third := place("40002")

	back := g.openSSE(key, credQuery(cred), map[string]string{"Last-Event-ID": last.ID})
	back.expect("order orderId="+second+" status=OPEN", "order orderId="+second+" status=CANCELLED", "order orderId="+third+" status=OPEN")
	back.none(500 * time.Millisecond)

	// after= does the same, and the api_key query parameter carries the key.
	q := credQuery(cred, "after", last.ID, "api_key", key)
	again := g.openSSE("", q, nil)
	again.expect("order orderId="+second+" status=OPEN", "order orderId="+second+" status=CANCELLED", "order orderId="+third+" status=OPEN")

	// A resume point the stream no longer has starts with reset.
	reset := g.openSSE(key, credQuery(cred, "after", "999999999"), nil)
	r := reset.expect("reset")[0]
	if string(r.Data) != "{}" || r.ID == "" {
		t.Fatalf("reset event = %+v, want data {} and a resume id", r)
	}
	fourth := place("40003")
	reset.expect("order orderId=" + fourth + " status=OPEN")
}

func TestEventsSSEScopesAsV1(t *testing.T) {
	g, cred, _, _ := richPaper(t)
	acct := g.Bootstrap().AccountID
	key := g.Bootstrap().APIKey

	// Errors before the stream are /v1's JSON envelope with a request id.
	for _, c := range []struct {
		name, key string
		q         url.Values
		status    int
		code      contract.Code
	}{
		{"no key", "", credQuery(cred), 401, contract.CodeMissingAPIKey},
		{"no credential", key, url.Values{}, 400, contract.CodeInvalidRequest},
		{"unknown credential", key, credQuery("0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11"), 404, contract.CodeCredentialNotFound},
		{"bad type", key, credQuery(cred, "types", "order,trades"), 400, contract.CodeInvalidRequest},
		{"bad resume id", key, credQuery(cred, "after", "yesterday"), 400, contract.CodeInvalidRequest},
	} {
		s, r := g.trySSE(c.key, c.q, nil)
		if s != nil {
			t.Fatalf("%s: the stream opened", c.name)
		}
		if r.status != c.status || r.code() != string(c.code) || r.body["success"] != false || r.header.Get("X-Request-Id") == "" ||
			!strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %s (request id %q), want %d %s in the JSON envelope", c.name, r.status, r.raw, r.header.Get("X-Request-Id"), c.status, c.code)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, g.URL()+"/v1/events", nil)
	if r := g.do(req); r.status != 405 || r.header.Get("Allow") != "GET" {
		t.Errorf("POST /v1/events: %d Allow %q, want 405 Allow GET", r.status, r.header.Get("Allow"))
	}

	// A key without the credential gets exactly /v1's error.
	other := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest, AllowedCredentials: []string{g.Bootstrap().CredentialID}})
	v1 := g.call(other, map[string]any{"operation": "getBalance", "credentialId": cred})
	_, sse := g.trySSE(other, credQuery(cred), nil)
	if sse.status != v1.status || sse.code() != v1.code() || sse.body["error"] != v1.body["error"] {
		t.Errorf("SSE refused %d %s, /v1 %d %s: want the same", sse.status, sse.raw, v1.status, v1.raw)
	}
	live := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvLive})
	if _, r := g.trySSE(live, credQuery(cred), nil); r.code() != string(contract.CodeEnvironmentMismatch) {
		t.Errorf("live key on a testnet credential: %d %s", r.status, r.raw)
	}

	// A key limited to BTC sees BTC's events and none of ETH's.
	btcOnly := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest, Guards: contract.Guards{AllowedMarkets: []string{"BTC"}}})
	limited := g.openSSE(btcOnly, credQuery(cred, "types", "order"), nil)
	filtered := g.openSSE(key, credQuery(cred, "types", "order", "markets", "ETH"), nil)
	eth := g.call(key, map[string]any{"operation": "placeLimitOrder", "credentialId": cred, "market": "ETH", "side": "BUY", "size": "1", "price": "2000"})
	btc := g.call(key, map[string]any{"operation": "placeLimitOrder", "credentialId": cred, "market": "BTC", "side": "BUY", "size": "0.01", "price": "40000"})
	limited.expect("order market=BTC-USD-PERP orderId=" + btc.body["orderId"].(string))
	limited.none(300 * time.Millisecond)
	filtered.expect("order market=ETH-USD-PERP orderId=" + eth.body["orderId"].(string))
	filtered.none(300 * time.Millisecond)
}

func TestEventsSSERevokedKeyClosesAndStreamsAreCappedByTier(t *testing.T) {
	g, cred, _, _ := richPaper(t)
	acct := g.Bootstrap().AccountID
	k, err := g.Keys().CreateKey(context.Background(), acct, keys.KeyRequest{Env: contract.KeyEnvTest})
	if err != nil {
		t.Fatal(err)
	}
	s := g.openSSE(k.Key.Reveal(), credQuery(cred), nil)
	start := time.Now()
	if _, err := g.Keys().RevokeKey(context.Background(), k.Info.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.closed:
		t.Logf("stream closed %s after the revocation", time.Since(start))
	case <-time.After(time.Second):
		t.Fatal("the revoked key's stream is still open after 1 s")
	}
	if _, r := g.trySSE(k.Key.Reveal(), credQuery(cred), nil); r.code() != string(contract.CodeKeyRevoked) {
		t.Fatalf("revoked key reopening: %d %s", r.status, r.raw)
	}

	// A halted key's stream closes too (the client reconnects under the
	// key as it now is).
	h, err := g.Keys().CreateKey(context.Background(), acct, keys.KeyRequest{Env: contract.KeyEnvTest})
	if err != nil {
		t.Fatal(err)
	}
	hs := g.openSSE(h.Key.Reveal(), credQuery(cred), nil)
	start = time.Now()
	if _, err := g.Keys().HaltKey(context.Background(), h.Info.ID, contract.HaltRequest{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hs.closed:
		t.Logf("stream closed %s after the halt", time.Since(start))
	case <-time.After(time.Second):
		t.Fatal("the halted key's stream is still open after 1 s")
	}

	// A free account's key holds two streams; the third is refused naming the cap.
	free := g.newAccount(contract.TierFree)
	freeCred := g.newCredential(free, contract.Paper, contract.Testnet, `{}`)
	fk := g.newKey(free, keys.KeyRequest{Env: contract.KeyEnvTest})
	a := g.openSSE(fk, credQuery(freeCred), nil)
	g.openSSE(fk, credQuery(freeCred), nil)
	_, r := g.trySSE(fk, credQuery(freeCred), nil)
	if r.status != http.StatusTooManyRequests || r.code() != string(contract.CodeRateLimited) || !strings.Contains(r.body["error"].(string), "2") ||
		r.header.Get("Retry-After") == "" {
		t.Fatalf("third stream of a free key: %d %s, want 429 RATE_LIMITED naming the cap of 2", r.status, r.raw)
	}
	a.close()
	checkFor(t, 2*time.Second, 50*time.Millisecond, func() error {
		s, r := g.trySSE(fk, credQuery(freeCred), nil)
		if s == nil {
			return fmt.Errorf("after closing one: %d %s", r.status, r.raw)
		}
		return nil
	})
}

func TestEventOperationsWaitForOrderOverMCPOutlastsTheRequestTimeout(t *testing.T) {
	g, cred, mark, tick := richPaper(t, func(c *Config) { c.Edge.RequestTimeout = time.Second })
	key := g.Bootstrap().APIKey
	c := mustConnectMCP(t, g, "streamable", key)
	below := mark.Mul(decimal.RequireFromString("0.9")).Round(0) // far from the walk's reach
	placed := c.ok("place_limit_order", map[string]any{"credentialId": cred, "market": "BTC", "side": "BUY", "size": "0.01",
		"price": below.String(), "clientOrderId": "wait-1"})
	id := placed["orderId"].(string)

	// Nothing happens for 2 s: the wait times out after its own 2 s, not the edge's 1 s.
	start := time.Now()
	res := c.ok("wait_for_order", map[string]any{"credentialId": cred, "orderId": id, "until": "filled", "timeoutSeconds": 2})
	if took := time.Since(start); res["reached"] != false || took < 2*time.Second {
		t.Fatalf("a wait on a resting order answered %v after %s, want reached:false after 2 s", res, took)
	}
	if o := res["order"].(map[string]any); o["status"] != "OPEN" || o["orderId"] != id {
		t.Fatalf("order as last known = %v, want OPEN %s", o, id)
	}

	// The mark crosses the limit 2.5 s into a wait: it answers on the fill.
	go func() {
		time.Sleep(2500 * time.Millisecond)
		g.setMark("BTC-USD-PERP", below.Sub(tick.Mul(decimal.NewFromInt(5))).String())
	}()
	start = time.Now()
	res = c.ok("wait_for_order", map[string]any{"credentialId": cred, "clientOrderId": "wait-1", "until": "filled", "timeoutSeconds": 10})
	took := time.Since(start)
	o := res["order"].(map[string]any)
	if res["reached"] != true || o["status"] != "FILLED" || o["filledSize"] != "0.01" || took < 2*time.Second || took > 5*time.Second {
		t.Fatalf("wait for the fill answered %v after %s, want reached FILLED about 2.5 s in", res, took)
	}
	t.Logf("wait_for_order answered %s after the call, the request timeout being 1 s", took)

	// Already final: done answers at once; change waits for a change.
	res = c.ok("wait_for_order", map[string]any{"credentialId": cred, "orderId": id, "until": "done", "timeoutSeconds": 5})
	if res["reached"] != true {
		t.Fatalf("done on a filled order: %v", res)
	}
}

func TestEventOperationsOverV1(t *testing.T) {
	g, cred, _, _ := richPaper(t)
	key := g.Bootstrap().APIKey
	call := func(body map[string]any) response {
		t.Helper()
		body["credentialId"] = cred
		return g.call(key, body)
	}
	var ids []string
	for _, p := range []string{"40000", "40001", "40002"} {
		r := call(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": p})
		ids = append(ids, r.body["orderId"].(string))
	}
	call(map[string]any{"operation": "cancelOrder", "market": "BTC", "orderId": ids[0]})
	call(map[string]any{"operation": "placeMarketOrder", "market": "ETH", "side": "BUY", "size": "0.1"})

	r := call(map[string]any{"operation": "getEvents", "types": "order", "limit": 2})
	evs := objects(t, r.body["events"])
	if r.status != 200 || len(evs) != 2 || evs[0]["type"] != "order" || r.body["next"] != evs[1]["id"] {
		t.Fatalf("first page: %d %s", r.status, r.raw)
	}
	r = call(map[string]any{"operation": "getEvents", "types": "order", "after": r.body["next"]})
	rest := objects(t, r.body["events"])
	// Orders 3 OPEN, 1 CANCELLED, ETH OPEN and ETH FILLED.
	if len(rest) != 4 || eventData(t, contract.Event{Data: mustRaw(rest[1]["data"])})["status"] != "CANCELLED" {
		t.Fatalf("second page: %s", r.raw)
	}
	last := r.body["next"]
	if r = call(map[string]any{"operation": "getEvents", "after": last}); len(objects(t, r.body["events"])) != 0 || r.body["next"] != last {
		t.Fatalf("reading past the end: %s", r.raw)
	}
	r = call(map[string]any{"operation": "getEvents", "types": "fill,position"})
	for _, ev := range objects(t, r.body["events"]) {
		if ev["type"] != "fill" && ev["type"] != "position" {
			t.Fatalf("types=fill,position gave a %v event", ev["type"])
		}
	}
	if r = call(map[string]any{"operation": "getEvents", "after": "99999999"}); objects(t, r.body["events"])[0]["type"] != "reset" {
		t.Fatalf("an id past the stream: %s, want a reset first", r.raw)
	}

	// waitForOrder: an order already final answers at once.
	start := time.Now()
	r = call(map[string]any{"operation": "waitForOrder", "orderId": ids[0], "until": "done", "timeoutSeconds": 30})
	if r.body["reached"] != true || time.Since(start) > 2*time.Second {
		t.Fatalf("waitForOrder on a cancelled order: %s after %s", r.raw, time.Since(start))
	}
	for _, c := range []struct {
		body   map[string]any
		status int
		code   contract.Code
	}{
		{map[string]any{"operation": "waitForOrder", "until": "done", "timeoutSeconds": 1}, 400, contract.CodeInvalidRequest},
		{map[string]any{"operation": "waitForOrder", "orderId": "1", "clientOrderId": "x", "until": "done", "timeoutSeconds": 1}, 400, contract.CodeInvalidRequest},
		{map[string]any{"operation": "waitForOrder", "orderId": "1", "until": "done", "timeoutSeconds": 61}, 400, contract.CodeInvalidRequest},
		{map[string]any{"operation": "waitForOrder", "orderId": "1", "until": "soon", "timeoutSeconds": 1}, 400, contract.CodeInvalidRequest},
		{map[string]any{"operation": "waitForOrder", "orderId": "777", "until": "done", "timeoutSeconds": 1}, 502, contract.CodeExchangeError},
		{map[string]any{"operation": "getEvents", "limit": 501}, 400, contract.CodeInvalidRequest},
		{map[string]any{"operation": "getEvents", "types": "trades"}, 400, contract.CodeInvalidRequest},
		{map[string]any{"operation": "getEvents", "after": "x1"}, 400, contract.CodeInvalidRequest},
	} {
		if r := call(c.body); r.status != c.status || r.code() != string(c.code) {
			t.Errorf("%v: %d %s, want %d %s", c.body, r.status, r.raw, c.status, c.code)
		}
	}
}

func mustRaw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// wsClient is a GET /v1/ws connection reading server messages in the
// background.
type wsClient struct {
	t      *testing.T
	conn   *websocket.Conn
	msgs   chan map[string]any
	closed chan struct{}
}

func (g *testGateway) dialWS(key string) *wsClient {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, strings.Replace(g.URL(), "http://", "ws://", 1)+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"X-API-Key": {key}}})
	if err != nil {
		g.t.Fatalf("dial /v1/ws: %v (%v)", err, resp)
	}
	c := &wsClient{t: g.t, conn: conn, msgs: make(chan map[string]any, 1000), closed: make(chan struct{})}
	go func() {
		defer close(c.closed)
		for {
			_, data, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal(data, &m) != nil {
				g.t.Errorf("server message is not JSON: %q", data)
			}
			c.msgs <- m
		}
	}()
	g.t.Cleanup(func() { conn.CloseNow() })
	return c
}

func (c *wsClient) send(m map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(m)
	if err := c.conn.Write(context.Background(), websocket.MessageText, b); err != nil {
		c.t.Fatalf("ws write: %v", err)
	}
}

func (c *wsClient) next() map[string]any {
	c.t.Helper()
	select {
	case m := <-c.msgs:
		return m
	case <-time.After(5 * time.Second):
		c.t.Fatal("no WebSocket message within 5 s")
	}
	return nil
}

// expect reads one message per wanted "op" or "event type k=v ..." line.
func (c *wsClient) expect(want ...string) []map[string]any {
	c.t.Helper()
	var got []map[string]any
	for _, w := range want {
		m := c.next()
		got = append(got, m)
		parts := strings.Fields(w)
		if m["op"] != parts[0] {
			c.t.Fatalf("message %v, want %s", m, w)
		}
		fields := m
		if parts[0] == "event" {
			ev := m["event"].(map[string]any)
			if ev["type"] != parts[1] {
				c.t.Fatalf("event %v, want %s", ev, w)
			}
			fields = ev["data"].(map[string]any)
			for k, v := range ev {
				if k != "data" {
					fields["@"+k] = v
				}
			}
			parts = parts[1:]
		}
		for _, kv := range parts[1:] {
			k, v, _ := strings.Cut(kv, "=")
			if fmt.Sprint(fields[k]) != v {
				c.t.Fatalf("message %v: %s = %v, want %s", m, k, fields[k], v)
			}
		}
	}
	return got
}

func (c *wsClient) none(wait time.Duration) {
	c.t.Helper()
	select {
	case m := <-c.msgs:
		c.t.Fatalf("unexpected message %v", m)
	case <-time.After(wait):
	}
}

func TestEventsWebSocketCarriesSeveralCredentials(t *testing.T) {
	g, credA, _, _ := richPaper(t)
	acct := g.Bootstrap().AccountID
	credB := g.newCredential(acct, contract.Paper, contract.Testnet, `{"startingBalance":"100000"}`)
	k, err := g.Keys().CreateKey(context.Background(), acct, keys.KeyRequest{Env: contract.KeyEnvTest})
	if err != nil {
		t.Fatal(err)
	}
	key := k.Key.Reveal()
	place := func(cred string, body map[string]any) string {
		t.Helper()
		body["credentialId"] = cred
		r := g.call(key, body)
		if r.status != http.StatusOK {
			t.Fatalf("%v: %d %s", body, r.status, r.raw)
		}
		return r.body["orderId"].(string)
	}

	// Refused before the upgrade: the JSON envelope.
	req, _ := http.NewRequest(http.MethodGet, g.URL()+"/v1/ws", nil)
	if r := g.do(req); r.status != 401 || r.code() != string(contract.CodeMissingAPIKey) || r.header.Get("X-Request-Id") == "" {
		t.Fatalf("GET /v1/ws without a key: %d %s", r.status, r.raw)
	}

	ws := g.dialWS(key)
	ws.send(map[string]any{"op": "subscribe", "credentialId": credA, "types": []string{"order"}})
	ws.send(map[string]any{"op": "subscribe", "credentialId": credB})
	ws.expect("subscribed credentialId="+credA, "subscribed credentialId="+credB)
	a := place(credA, map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "40000"})
	ws.expect("event order orderId=" + a + " status=OPEN @credentialId=" + credA + " @source=stream")
	b := place(credB, map[string]any{"operation": "placeMarketOrder", "market": "ETH", "side": "BUY", "size": "0.1"})
	got := ws.expect("event order orderId="+b+" status=OPEN @credentialId="+credB, "event fill orderId="+b+" feeAsset=USD",
		"event position side=LONG", "event balance", "event order orderId="+b+" status=FILLED")
	if fee := got[1]["event"].(map[string]any)["data"].(map[string]any)["fee"]; fee == "0" || fee == nil {
		t.Errorf("fill fee = %v", fee)
	}

	// Errors are messages; the socket stays.
	ws.send(map[string]any{"op": "subscribe", "credentialId": "0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11"})
	ws.expect("error code=CREDENTIAL_NOT_FOUND")
	ws.send(map[string]any{"op": "dance"})
	ws.expect("error code=INVALID_REQUEST")

	// Unsubscribed: A's events stop; resubscribing with after gets exactly the missed ones.
	last := got[4]["event"].(map[string]any)["id"].(string)
	ws.send(map[string]any{"op": "unsubscribe", "credentialId": credA})
	ws.send(map[string]any{"op": "unsubscribe", "credentialId": credB})
	// The socket handles messages in order and unsubscribe has no answer:
	// an error answer to a later message says both were done.
	ws.send(map[string]any{"op": "dance"})
	ws.expect("error code=INVALID_REQUEST")
	a2 := place(credA, map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "40001"})
	ws.none(300 * time.Millisecond)
	ws.send(map[string]any{"op": "subscribe", "credentialId": credA, "after": last})
	ws.expect("subscribed", "event order orderId="+a2+" status=OPEN")
	ws.none(300 * time.Millisecond)

	// A revoked key's socket closes within 1 s.
	start := time.Now()
	if _, err := g.Keys().RevokeKey(context.Background(), k.Info.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ws.closed:
		t.Logf("socket closed %s after the revocation", time.Since(start))
	case <-time.After(time.Second):
		t.Fatal("the revoked key's socket is still open after 1 s")
	}
}

// TestEventsProtectionPairOnPaper: the take-profit fires; its fill event
// is followed within a second by the stop-loss's CANCELLED event, with no
// call in between (the paper venue links the pair to the position).
func TestEventsProtectionPairOnPaper(t *testing.T) {
	g, cred, mark, tick := richPaper(t)
	key := g.Bootstrap().APIKey
	call := func(body map[string]any) map[string]any {
		t.Helper()
		body["credentialId"] = cred
		r := g.call(key, body)
		if r.status != http.StatusOK {
			t.Fatalf("%v: %d %s", body["operation"], r.status, r.raw)
		}
		return r.body
	}
	call(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.01"})
	prot := call(map[string]any{"operation": "placeProtectionOrders", "market": "BTC", "side": "LONG", "size": "0.01",
		"entryPrice": mark.String(), "tpPercent": 1, "slPercent": 1})
	tp, sl := prot["tpOrderId"], prot["slOrderId"]
	s := g.openSSE(key, credQuery(cred, "types", "order,fill"), nil)
	g.setMark("BTC-USD-PERP", mark.Mul(decimal.RequireFromString("1.02")).Round(0).Sub(tick).String())
	// The placements' own events may reach the stream after it opened:
	// pass over them up to the fill, then nothing may come between.
	evs := s.await(5*time.Second, fmt.Sprintf("fill orderId=%v", tp))
	evs = append(evs, s.expect(fmt.Sprintf("order orderId=%v status=CANCELLED", sl),
		fmt.Sprintf("order orderId=%v status=FILLED", tp))...)
	if gap := evs[1].ReceivedAt - evs[0].ReceivedAt; gap > 1000 {
		t.Fatalf("the stop-loss was cancelled %d ms after the take-profit's fill", gap)
	}
}

// TestEventOperationsWaitFindsAnOrderBehindManyEvents: the order's last
// state is older than the newest few thousand events of the stream, which
// waitForOrder reads first; it still finds it.
func TestEventOperationsWaitFindsAnOrderBehindManyEvents(t *testing.T) {
	g, cred, _, _ := richPaper(t)
	key := g.Bootstrap().APIKey
	r := g.call(key, map[string]any{"operation": "placeMarketOrder", "credentialId": cred, "market": "BTC", "side": "BUY", "size": "0.01"})
	id := r.body["orderId"].(string)
	nc, err := g.Connect("test-filler")
	if err != nil {
		t.Fatal(err)
	}
	pub := events.NewPublisher(nc, g.cfg.Edge.Events(), nil)
	if err := pub.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	other := g.newCredential(g.Bootstrap().AccountID, contract.Paper, contract.Testnet, `{}`)
	for i := range 5200 { // another credential's orders
		pub.Publish(events.New(contract.Paper, other, contract.SourceStream, time.Now(), contract.OrderEvent{
			OrderID: fmt.Sprint(i), Market: "BTC-USD-PERP", Side: contract.Buy, Type: "LIMIT", Status: "OPEN"}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r = g.call(key, map[string]any{"operation": "waitForOrder", "credentialId": cred, "orderId": id, "until": "done", "timeoutSeconds": 2})
	if r.body["reached"] != true || r.body["order"].(map[string]any)["status"] != "FILLED" {
		t.Fatalf("waitForOrder on an order behind 5200 events: %s", r.raw)
	}
}

// TestEventsStreamsEndAtShutdown: open streams do not hold the gateway's
// shutdown for its grace period; they end at once.
func TestEventsStreamsEndAtShutdown(t *testing.T) {
	g, cred, _, _ := richPaper(t)
	s := g.openSSE(g.Bootstrap().APIKey, credQuery(cred), nil)
	ws := g.dialWS(g.Bootstrap().APIKey)
	ws.send(map[string]any{"op": "subscribe", "credentialId": cred})
	ws.expect("subscribed")
	start := time.Now()
	if err := g.Close(); err != nil {
		t.Fatalf("close with open streams: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("close took %s with open event streams", took)
	}
	for name, closed := range map[string]chan struct{}{"SSE": s.closed, "WebSocket": ws.closed} {
		select {
		case <-closed:
		case <-time.After(time.Second):
			t.Errorf("the %s stream is still open after the shutdown", name)
		}
	}
}
