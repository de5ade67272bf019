package fault

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys/admin"
	"github.com/shopspring/decimal"
)

// Account events in the distributed deployment (issue 29): paper-venue
// publishes into JetStream, the edge streams them.

// events is an open GET /v1/events read in the background.
type events struct {
	t    *testing.T
	ch   chan contract.Event
	stop context.CancelFunc
}

func (c *cluster) events(key, query string, header map[string]string) *events {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.EdgeURL+"/v1/events?"+query, nil)
	req.Header.Set("X-API-Key", key)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		c.t.Fatalf("GET /v1/events: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		cancel()
		c.t.Fatalf("GET /v1/events: %d %s", resp.StatusCode, b.String())
	}
	e := &events{t: c.t, ch: make(chan contract.Event, 10000), stop: cancel}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev contract.Event
				if json.Unmarshal([]byte(data), &ev) == nil {
					e.ch <- ev
				}
			}
		}
	}()
	c.t.Cleanup(cancel)
	return e
}

// expect reads one event per "type k=v ..." line.
func (e *events) expect(want ...string) []contract.Event {
	e.t.Helper()
	var got []contract.Event
	for _, w := range want {
		var ev contract.Event
		select {
		case ev = <-e.ch:
		case <-time.After(10 * time.Second):
			e.t.Fatalf("no event within 10 s; want %s", w)
		}
		got = append(got, ev)
		parts := strings.Fields(w)
		var data map[string]any
		_ = json.Unmarshal(ev.Data, &data)
		if string(ev.Type) != parts[0] {
			e.t.Fatalf("event %s %s, want %s", ev.Type, ev.Data, w)
		}
		for _, kv := range parts[1:] {
			k, v, _ := strings.Cut(kv, "=")
			if fmt.Sprint(data[k]) != v {
				e.t.Fatalf("event %s %s: %s = %v, want %s", ev.Type, ev.Data, k, data[k], v)
			}
		}
	}
	return got
}

func (e *events) none(wait time.Duration) {
	e.t.Helper()
	select {
	case ev := <-e.ch:
		e.t.Fatalf("unexpected event %s %s", ev.Type, ev.Data)
	case <-time.After(wait):
	}
}

// venueURL is the paper venue's base URL.
func (c *cluster) venueURL() string {
	return "http://" + c.Venue.Field(c.t, "paper venue started", "addr")
}

// setMark moves a paper market's mark on the venue.
func (c *cluster) setMark(market string, price decimal.Decimal) {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"price": price})
	req, _ := http.NewRequest(http.MethodPut, c.venueURL()+"/v1/markets/"+market+"/mark", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("set mark: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		c.t.Fatalf("set mark: %d", resp.StatusCode)
	}
}

// tick is a paper market's tick size.
func (c *cluster) tick(market string) decimal.Decimal {
	c.t.Helper()
	resp, err := http.Get(c.venueURL() + "/v1/markets/" + market)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		TickSize decimal.Decimal `json:"tickSize"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		c.t.Fatal(err)
	}
	return m.TickSize
}

// richCredential is a paper credential able to take several book levels.
func (c *cluster) richCredential() string {
	c.t.Helper()
	cred, err := c.Admin.CreateCredential(context.Background(), c.Account, admin.CredentialRequest{
		Exchange: contract.Paper, Env: contract.Testnet, Label: "events", Secret: json.RawMessage(`{"startingBalance":"100000000"}`)})
	if err != nil {
		c.t.Fatal(err)
	}
	return cred.ID
}

// mustCall returns a function that calls the edge with cred and fails the
// test unless the answer is a success.
func (c *cluster) mustCall(cred string) func(map[string]any) reply {
	return func(body map[string]any) reply {
		c.t.Helper()
		body["credentialId"] = cred
		r := c.Call(c.APIKey, body)
		if r.Status != 200 {
			c.t.Fatalf("%v: %d %s", body["operation"], r.Status, r.Raw)
		}
		return r
	}
}

func TestEventsDistributed(t *testing.T) {
	c := newCluster(t, clusterOptions{RequestTimeout: 2 * time.Second})
	cred := c.richCredential()
	call := c.mustCall(cred)
	mark, tick := decimal.NewFromInt(50000), c.tick("BTC-USD-PERP")
	s := c.events(c.APIKey, "credentialId="+cred, nil)
	// The price walk steps once a second, by about 50 ticks: the mark is set
	// and the order placed within one second, so no step comes between.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	c.setMark("BTC-USD-PERP", mark)

	// Limit order, partial fill, fill, position, cancel: in order, fee on fills.
	id := call(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "20",
		"price": mark.Add(tick.Mul(decimal.NewFromInt(2))).String()}).Body["orderId"].(string)
	got := s.expect("order orderId="+id+" status=OPEN filledSize=0", "fill orderId="+id+" liquidity=TAKER feeAsset=USD",
		"position side=LONG", "balance asset=USD", "fill orderId="+id, "position side=LONG", "balance", "order orderId="+id+" status=OPEN")
	var fill map[string]any
	_ = json.Unmarshal(got[1].Data, &fill)
	if fee, _ := decimal.NewFromString(fmt.Sprint(fill["fee"])); !fee.IsPositive() {
		t.Errorf("fill fee %v, want the taker fee", fill["fee"])
	}
	c.setMark("BTC-USD-PERP", mark.Sub(tick.Mul(decimal.NewFromInt(10))))
	s.expect("fill orderId="+id+" liquidity=MAKER", "position side=LONG size=20", "balance", "order orderId="+id+" status=FILLED filledSize=20")
	far := call(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "SELL", "size": "1", "price": "90000"}).Body["orderId"].(string)
	call(map[string]any{"operation": "cancelOrder", "market": "BTC", "orderId": far})
	last := s.expect("order orderId="+far+" status=OPEN", "order orderId="+far+" status=CANCELLED")[1]
	s.stop()

	// Resume: three events while away, exactly those three on reconnect.
	a := call(restingBuy("ev-a", "0.01")).Body["orderId"].(string)
	call(map[string]any{"operation": "cancelOrder", "market": "BTC", "orderId": a})
	b := call(restingBuy("ev-b", "0.01")).Body["orderId"].(string)
	back := c.events(c.APIKey, "credentialId="+cred, map[string]string{"Last-Event-ID": last.ID})
	back.expect("order orderId="+a+" status=OPEN", "order orderId="+a+" status=CANCELLED", "order orderId="+b+" status=OPEN")
	back.none(500 * time.Millisecond)

	// waitForOrder outlasts the edge's 2 s request timeout and answers on the fill.
	go func() {
		time.Sleep(3 * time.Second)
		c.setMark("BTC-USD-PERP", decimal.NewFromInt(1000))
	}()
	r := call(map[string]any{"operation": "waitForOrder", "orderId": b, "until": "filled", "timeoutSeconds": 15})
	if r.Body["reached"] != true || r.Took < 2500*time.Millisecond {
		t.Fatalf("waitForOrder: %s after %s, want reached after about 3 s", r.Raw, r.Took)
	}
}

// TestEventsSurviveAConnectorKill: with two connector-paper replicas, kill
// -9 one while a client streams; placements go on through the other, and
// every fill arrives once.
func TestEventsSurviveAConnectorKill(t *testing.T) {
	c := newCluster(t, clusterOptions{})
	cred := c.richCredential()
	second := testenv.Start(t, "connector-paper-2", filepath.Join(c.bins, "connector-paper"), c.env(map[string]string{
		"PERPGATE_PAPER_VENUE_URL": c.venueURL(), "PERPGATE_REDIS_URL": c.Redis.URL,
	}))
	second.Field(t, "connector started", "subject")
	s := c.events(c.APIKey, "types=fill&credentialId="+cred, nil)
	var placed []string
	place := func(i int) {
		r := c.Call(c.APIKey, map[string]any{"operation": "placeMarketOrder", "credentialId": cred, "market": "BTC",
			"side": []string{"BUY", "SELL"}[i%2], "size": "0.001"})
		if r.Status == 200 {
			placed = append(placed, r.Body["orderId"].(string))
		}
	}
	for i := range 10 {
		place(i)
	}
	c.Connector.Kill()
	for i := 10; i < 30; i++ {
		place(i)
		time.Sleep(50 * time.Millisecond)
	}
	if len(placed) < 25 {
		t.Fatalf("only %d of 30 placements answered with one replica left", len(placed))
	}
	s.fillsOnce(placed, 10*time.Second)
}

// fillsOnce reads fill events until every placed order has one, within
// wait, and fails the test if any order's fill came twice. A placement
// that failed (a timeout while a NATS node died) may still have filled:
// its fill may come too, once.
func (e *events) fillsOnce(placed []string, wait time.Duration) {
	e.t.Helper()
	want := map[string]bool{}
	for _, id := range placed {
		want[id] = true
	}
	fills := map[string]int{}
	count := func(ev contract.Event) {
		var f contract.FillEvent
		_ = json.Unmarshal(ev.Data, &f)
		fills[f.OrderID]++
		if fills[f.OrderID] > 1 {
			e.t.Errorf("order %s: a second fill event (%s)", f.OrderID, ev.Source)
		}
	}
	deadline := time.After(wait)
	for got := 0; got < len(placed); {
		select {
		case ev := <-e.ch:
			count(ev)
			got = 0
			for id := range want {
				if fills[id] > 0 {
					got++
				}
			}
		case <-deadline:
			e.t.Fatalf("fills of %d of %d placed orders arrived", got, len(placed))
		}
	}
	for end := time.After(time.Second); ; {
		select {
		case ev := <-e.ch:
			count(ev)
			continue
		case <-end:
		}
		break
	}
	for id := range fills {
		if !want[id] {
			e.t.Logf("order %s, whose placement failed, filled (one event)", id)
		}
	}
}

// natsCluster runs three nats-server processes clustered, with JetStream,
// on free ports; it returns them and the client URL list.
func natsCluster(t *testing.T) ([]*testenv.Daemon, string) {
	t.Helper()
	dir := t.TempDir()
	type node struct{ client, route int }
	nodes := []node{{testenv.FreePort(t), testenv.FreePort(t)}, {testenv.FreePort(t), testenv.FreePort(t)}, {testenv.FreePort(t), testenv.FreePort(t)}}
	var routes, urls []string
	for _, n := range nodes {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", n.route))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", n.client))
	}
	var ds []*testenv.Daemon
	for i, n := range nodes {
		conf := filepath.Join(dir, fmt.Sprintf("n%d.conf", i))
		body := fmt.Sprintf("server_name: n%d\nlisten: 127.0.0.1:%d\njetstream { store_dir: %q }\ncluster {\n  name: perpgate\n  listen: 127.0.0.1:%d\n  routes: [%s]\n}\n",
			i, n.client, filepath.Join(dir, fmt.Sprintf("js%d", i)), n.route, strings.Join(routes, ", "))
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, testenv.NATSConfDaemon(t, conf, n.client))
	}
	list := strings.Join(urls, ",")
	nc, err := nats.Connect(list)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	testenv.Poll(t, "the cluster's JetStream has a leader", 20*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := js.AccountInfo(ctx)
		return err
	})
	return ds, list
}

// streamLeader checks that the event stream has the replicas asked for and
// returns the index of the node leading it.
func streamLeader(t *testing.T, urls string, replicas int) int {
	t.Helper()
	nc, err := nats.Connect(urls)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, contract.NewSubjects("").AccountEventStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Replicas != replicas || info.Cluster == nil {
		t.Fatalf("event stream has %d replicas (cluster %v), want %d", info.Config.Replicas, info.Cluster, replicas)
	}
	var n int
	if _, err := fmt.Sscanf(info.Cluster.Leader, "n%d", &n); err != nil {
		t.Fatalf("stream leader %q", info.Cluster.Leader)
	}
	return n
}

// TestEventsThreeNodeNATSCluster: the event stream has three replicas; one
// NATS node is killed under a steady flow of placements, and every fill of
// a placement that succeeded arrives once.
func TestEventsThreeNodeNATSCluster(t *testing.T) {
	nodes, urls := natsCluster(t)
	c := newCluster(t, clusterOptions{NATSURL: urls, Env: map[string]string{"PERPGATE_JETSTREAM_REPLICAS": "3"}})
	cred := c.richCredential()
	s := c.events(c.APIKey, "types=fill&credentialId="+cred, nil)
	var mu sync.Mutex
	var placed []string
	failed, afterKill := 0, 0
	killed := false
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			r := c.Call(c.APIKey, map[string]any{"operation": "placeMarketOrder", "credentialId": cred, "market": "BTC",
				"side": []string{"BUY", "SELL"}[i%2], "size": "0.001"})
			mu.Lock()
			if r.Status == 200 {
				placed = append(placed, r.Body["orderId"].(string))
				if killed {
					afterKill++
				}
			} else {
				failed++
				t.Logf("placement refused: %d %s", r.Status, r.Body["code"])
			}
			mu.Unlock()
		}
	}()
	time.Sleep(2 * time.Second)
	leader := streamLeader(t, urls, 3)
	nodes[leader].Kill()
	mu.Lock()
	killed = true
	mu.Unlock()
	t.Logf("killed NATS node n%d, the event stream's leader", leader)
	// The flow goes on until ten placements went through the two nodes
	// left (a new leader takes the old server a few seconds to elect).
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		n := afterKill
		mu.Unlock()
		if n >= 10 {
			break
		}
	}
	close(stop)
	<-done
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d placements answered (%d after the kill), %d failed while the node went down", len(placed), afterKill, failed)
	if afterKill < 10 {
		t.Fatalf("only %d placements answered after the node was killed", afterKill)
	}
	s.fillsOnce(placed, 20*time.Second)
}

// TestEventsAcrossAPaperVenueRestart: paper-venue, which publishes the
// events, is killed -9 and restarted; the open stream goes on with the
// events after the restart, and none from before comes again.
func TestEventsAcrossAPaperVenueRestart(t *testing.T) {
	c := newCluster(t, clusterOptions{})
	cred := c.richCredential()
	call := c.mustCall(cred)
	c.setMark("BTC-USD-PERP", decimal.NewFromInt(50000))
	s := c.events(c.APIKey, "types=order,fill&credentialId="+cred, nil)
	buy := call(map[string]any{"operation": "placeMarketOrder", "market": "BTC", "side": "BUY", "size": "0.01"}).Body["orderId"].(string)
	rest := call(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "SELL", "size": "0.01", "price": "51000"}).Body["orderId"].(string)
	s.expect("order orderId="+buy+" status=OPEN", "fill orderId="+buy, "order orderId="+buy+" status=FILLED", "order orderId="+rest+" status=OPEN")

	c.Venue.Kill()
	c.Venue = c.Venue.Restart(t)
	c.Venue.Field(t, "paper venue started", "addr")
	testenv.Poll(t, "the venue answers again", 15*time.Second, func() error {
		if r := c.Call(c.APIKey, map[string]any{"operation": "getBalance", "credentialId": cred}); r.Status != 200 {
			return fmt.Errorf("%d %s", r.Status, r.Raw)
		}
		return nil
	})
	s.none(time.Second) // the restart's reconcile found nothing missing
	c.setMark("BTC-USD-PERP", decimal.NewFromInt(52000))
	s.expect("fill orderId="+rest+" liquidity=MAKER", "order orderId="+rest+" status=FILLED")
	s.none(500 * time.Millisecond)
}

// TestEventsWebSocketDistributed: GET /v1/ws through the edge process
// carries the venue's events.
func TestEventsWebSocketDistributed(t *testing.T) {
	c := newCluster(t, clusterOptions{})
	cred := c.richCredential()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, strings.Replace(c.EdgeURL, "http://", "ws://", 1)+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"X-API-Key": {c.APIKey}}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	read := func() map[string]any {
		t.Helper()
		_, b, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	sub, _ := json.Marshal(map[string]any{"op": "subscribe", "credentialId": cred, "types": []string{"order", "fill"}})
	if err := conn.Write(ctx, websocket.MessageText, sub); err != nil {
		t.Fatal(err)
	}
	if m := read(); m["op"] != "subscribed" || m["credentialId"] != cred {
		t.Fatalf("first message %v, want subscribed", m)
	}
	r := c.Call(c.APIKey, map[string]any{"operation": "placeMarketOrder", "credentialId": cred, "market": "BTC", "side": "BUY", "size": "0.01"})
	if r.Status != 200 {
		t.Fatalf("place: %d %s", r.Status, r.Raw)
	}
	id := r.Body["orderId"]
	var got []string
	for range 3 {
		m := read()
		ev, _ := m["event"].(map[string]any)
		data, _ := ev["data"].(map[string]any)
		if m["op"] != "event" || data["orderId"] != id {
			t.Fatalf("message %v, want an event of order %v", m, id)
		}
		got = append(got, fmt.Sprintf("%v %v", ev["type"], data["status"]))
	}
	if strings.Join(got, ",") != "order OPEN,fill <nil>,order FILLED" {
		t.Fatalf("events %v, want the order OPEN, its fill, the order FILLED", got)
	}
}
