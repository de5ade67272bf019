package paradex

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/paradex/sim"
	"github.com/shopspring/decimal"
)

const (
	pathSummary = "/v1/markets/summary"
	pathBook    = "/v1/orderbook/{market}"
)

// streamFixture serves the adapter through the runtime on embedded NATS,
// with the simulator's /v1 websocket as its stream.
func streamFixture(t *testing.T, simCfg sim.Config, sc connector.StreamConfig) (*fixture, *connectortest.Replica) {
	t.Helper()
	f := newFixture(t, simCfg)
	r := connectortest.Serve(t, f.a, connectortest.Options{URL: testenv.EmbeddedNATS(t).ClientURL(),
		Subjects: contract.NewSubjects(testenv.Prefix(t)), Env: contract.Mainnet, Secret: f.cred.Secret, Stream: sc})
	return f, r
}

func quiet(f *fixture, path string, read func()) bool {
	before := f.sim.Hits("GET", path)
	read()
	return f.sim.Hits("GET", path) == before
}

func engineMark(t *testing.T, f *fixture, native string) (mark, index decimal.Decimal) {
	t.Helper()
	for _, m := range f.sim.Engine().Markets() {
		if m.Symbol == native {
			return m.MarkPrice, m.IndexPrice
		}
	}
	t.Fatalf("no market %s in the engine", native)
	return
}

// TestParadexStreamMarkAndFunding: markets_summary.{market} answers
// getMarkPrice (mark_price, underlying_price as the index) and
// getFundingRate from the view after the first read, without
// /markets/summary; a mark a test sets arrives at once.
func TestParadexStreamMarkAndFunding(t *testing.T) {
	f, r := streamFixture(t, sim.Config{}, connector.StreamConfig{})
	const market = "BTC-USD-PERP"
	r.MarkPrice(t, market)
	connectortest.Eventually(t, 5*time.Second, "mark reads stop reaching REST", func() bool {
		return quiet(f, pathSummary, func() { r.MarkPrice(t, market) })
	})
	want := decimal.RequireFromString("91234.5")
	if _, err := f.sim.Engine().SetMarkPrice(market, want); err != nil {
		t.Fatal(err)
	}
	var got contract.MarkPriceResult
	connectortest.Eventually(t, 3*time.Second, "the set mark streams in", func() bool {
		got = r.MarkPrice(t, market)
		return got.MarkPrice.Equal(want)
	})
	if _, index := engineMark(t, f, market); got.IndexPrice.IsZero() || got.AsOf == 0 {
		t.Fatalf("streamed mark %+v (venue's index %s)", got, index)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var fr contract.FundingRateResult
	read := func() {
		if err := r.Call(ctx, contract.OpGetFundingRate, contract.MarketParams{Market: market}, &fr); err != nil {
			t.Fatal(err)
		}
	}
	read()
	rest := fr
	connectortest.Eventually(t, 5*time.Second, "funding reads stop reaching REST", func() bool { return quiet(f, pathSummary, read) })
	if fr.NextFundingTime == 0 || fr.AsOf == 0 || fr.FundingIntervalHours != rest.FundingIntervalHours || rest.FundingIntervalHours == 0 {
		t.Fatalf("funding from the stream %+v, over REST %+v", fr, rest)
	}
	if fr.NextFundingTime%3600 != 0 || fr.NextFundingTime <= time.Now().Unix() {
		t.Fatalf("nextFundingTime %d is not the coming whole hour", fr.NextFundingTime)
	}
}

// TestParadexStreamBook: order_book.{market}.snapshot@15@100ms answers
// getOrderbook up to 15 levels from the view, as the venue's book; deeper
// reads stay on REST.
func TestParadexStreamBook(t *testing.T) {
	f, r := streamFixture(t, sim.Config{}, connector.StreamConfig{})
	const market = "ETH-USD-PERP"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	read := func(depth int) contract.OrderbookResult {
		var b contract.OrderbookResult
		if err := r.Call(ctx, contract.OpGetOrderbook, contract.OrderbookParams{Market: market, Depth: depth}, &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	read(10)
	connectortest.Eventually(t, 5*time.Second, "book reads stop reaching REST", func() bool {
		return quiet(f, pathBook, func() { read(10) })
	})
	connectortest.Eventually(t, 3*time.Second, "the streamed book is the venue's, 15 levels deep", func() bool {
		var got contract.OrderbookResult
		if !quiet(f, pathBook, func() { got = read(15) }) {
			return false
		}
		b, err := f.sim.Engine().Orderbook(market, 15)
		if err != nil || len(got.Bids) != 15 || len(got.Asks) != 15 {
			return false
		}
		for i := range 15 {
			if !got.Bids[i][0].Equal(b.Bids[i].Price) || !got.Bids[i][1].Equal(b.Bids[i].Size) ||
				!got.Asks[i][0].Equal(b.Asks[i].Price) || !got.Asks[i][1].Equal(b.Asks[i].Size) {
				return false
			}
		}
		return got.AsOf != 0
	})
	if quiet(f, pathBook, func() { read(20) }) {
		t.Fatal("a 20-level read was answered from a 15-level stream")
	}
}

// TestParadexStreamMultiplierMarket: 1000PEPE resolves to kPEPE-USD-PERP,
// whose channels carry Paradex's native name; its mark comes from the
// stream, and its decimals survive exactly.
func TestParadexStreamMultiplierMarket(t *testing.T) {
	f, r := streamFixture(t, sim.Config{}, connector.StreamConfig{})
	r.MarkPrice(t, "1000PEPE")
	connectortest.Eventually(t, 5*time.Second, "kPEPE mark reads stop reaching REST", func() bool {
		return quiet(f, pathSummary, func() { r.MarkPrice(t, "1000PEPE") })
	})
	want := decimal.RequireFromString("0.012345")
	if _, err := f.sim.Engine().SetMarkPrice("kPEPE-USD-PERP", want); err != nil {
		t.Fatal(err)
	}
	connectortest.Eventually(t, 3*time.Second, "kPEPE's set mark streams in", func() bool {
		return quiet(f, pathSummary, func() {}) && r.MarkPrice(t, "1000PEPE").MarkPrice.Equal(want)
	})
}

// TestParadexStreamReconnects: the simulator drops the socket; the holder
// dials again, subscribes again and reads return to the stream.
func TestParadexStreamReconnects(t *testing.T) {
	f, r := streamFixture(t, sim.Config{}, connector.StreamConfig{})
	const market = "BTC-USD-PERP"
	r.MarkPrice(t, market)
	connectortest.Eventually(t, 5*time.Second, "reads stop reaching REST", func() bool {
		return quiet(f, pathSummary, func() { r.MarkPrice(t, market) })
	})
	if d := f.sim.StreamDials(); d != 1 {
		t.Fatalf("%d sockets before the drop, want 1", d)
	}
	f.sim.DropStreams()
	connectortest.Eventually(t, 5*time.Second, "the socket dialled again", func() bool { return f.sim.StreamDials() == 2 })
	want := decimal.RequireFromString("88888.8")
	if _, err := f.sim.Engine().SetMarkPrice(market, want); err != nil {
		t.Fatal(err)
	}
	connectortest.Eventually(t, 5*time.Second, "reads come from the new socket", func() bool {
		return r.MarkPrice(t, market).MarkPrice.Equal(want) && quiet(f, pathSummary, func() { r.MarkPrice(t, market) })
	})
}

// TestParadexStreamSilenceRedials: a socket that stays open but sends
// nothing goes stale: reads go back to REST, and after the silence bound
// the holder drops it and dials again.
func TestParadexStreamSilenceRedials(t *testing.T) {
	f, r := streamFixture(t, sim.Config{}, connector.StreamConfig{Silence: time.Second})
	const market = "BTC-USD-PERP"
	r.MarkPrice(t, market)
	connectortest.Eventually(t, 5*time.Second, "reads stop reaching REST", func() bool {
		return quiet(f, pathSummary, func() { r.MarkPrice(t, market) })
	})
	f.sim.MuteStreams(true)
	connectortest.Eventually(t, 5*time.Second, "a silent socket's view goes stale", func() bool {
		return !quiet(f, pathSummary, func() { r.MarkPrice(t, market) })
	})
	connectortest.Eventually(t, 5*time.Second, "the silent socket dialled again", func() bool { return f.sim.StreamDials() >= 2 })
	f.sim.MuteStreams(false)
	connectortest.Eventually(t, 5*time.Second, "reads return to the stream", func() bool {
		return quiet(f, pathSummary, func() { r.MarkPrice(t, market) })
	})
}

// TestParadexStreamAnswersPings: the simulator's protocol-level pings are
// answered while the runtime reads the socket.
func TestParadexStreamAnswersPings(t *testing.T) {
	f, r := streamFixture(t, sim.Config{StreamPingEvery: 50 * time.Millisecond}, connector.StreamConfig{})
	r.MarkPrice(t, "BTC-USD-PERP")
	connectortest.Eventually(t, 5*time.Second, "pongs to the simulator's pings", func() bool { return f.sim.StreamPongs() >= 3 })
	if d := f.sim.StreamDials(); d != 1 {
		t.Fatalf("%d sockets, want 1 (pings must not break the socket)", d)
	}
}

// TestParadexMarketListStaysOnREST: getMarketsWithFunding is one
// /markets/summary?market=ALL call and subscribes nothing.
func TestParadexMarketListStaysOnREST(t *testing.T) {
	f, r := streamFixture(t, sim.Config{}, connector.StreamConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var res contract.MarketsResult
	for range 3 {
		if err := r.Call(ctx, contract.OpGetMarketsWithFunding, struct{}{}, &res); err != nil {
			t.Fatal(err)
		}
	}
	if len(res.Markets) == 0 || f.sim.Hits("GET", pathSummary) != 3 {
		t.Fatalf("markets %+v after %d summary calls", res, f.sim.Hits("GET", pathSummary))
	}
	time.Sleep(300 * time.Millisecond)
	if d := f.sim.StreamDials(); d != 0 {
		t.Fatalf("getMarketsWithFunding opened %d sockets", d)
	}
}

// TestParadexStreamURL: Paradex's own REST bases map to its websockets;
// any other base (PERPGATE_PARADEX_URL: a simulator or proxy) serves the
// socket at its own /v1.
func TestParadexStreamURL(t *testing.T) {
	c := DefaultConfig()
	if got := c.streamURL(contract.Mainnet); got != "wss://ws.api.prod.paradex.trade/v1" {
		t.Fatalf("mainnet %s", got)
	}
	if got := c.streamURL(contract.Testnet); got != "wss://ws.api.testnet.paradex.trade/v1" {
		t.Fatalf("testnet %s", got)
	}
	c.MainnetURL, c.TestnetURL = "http://127.0.0.1:8089/v1/", "https://proxy.example/v1"
	if got := c.streamURL(contract.Mainnet); got != "ws://127.0.0.1:8089/v1" {
		t.Fatalf("simulator %s", got)
	}
	if got := c.streamURL(contract.Testnet); got != "wss://proxy.example/v1" {
		t.Fatalf("proxy %s", got)
	}
}

// TestParadexStreamFrames decodes the frames as Paradex documents them
// (markets_summary and order_book examples of ccxt's pro/paradex, from
// Paradex's pages): decimals stay exact, BUY is bids, a snapshot holds
// 15 levels, answers and unknown channels are heartbeats.
func TestParadexStreamFrames(t *testing.T) {
	now := time.Date(2026, 11, 25, 13, 20, 0, 0, time.UTC)
	ev, err := decodeFrame([]byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"markets_summary.ORDI-USD-PERP",
		"data":{"symbol":"ORDI-USD-PERP","oracle_price":"49.80885481","mark_price":"49.80885481","last_traded_price":"62.038",
		"bid":"49.822","ask":"58.167","volume_24h":"0","total_volume":"54542628.66054200416","created_at":1718334307698,
		"underlying_price":"47.93","open_interest":"6999.5","funding_rate":"0.03919997509811","price_change_rate_24h":""}}}`), now)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Market != "ORDI-USD-PERP" || ev.Mark == nil || ev.Funding == nil || ev.Book != nil ||
		ev.Mark.MarkPrice.Decimal.String() != "49.80885481" || ev.Mark.IndexPrice.Decimal.String() != "47.93" ||
		ev.Funding.Rate.Decimal.String() != "0.03919997509811" || ev.Funding.OpenInterest.Decimal.String() != "6999.5" ||
		ev.Funding.NextFundingTime != time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC).Unix() {
		t.Fatalf("summary event %+v %+v %+v", ev, ev.Mark, ev.Funding)
	}
	// A field Paradex leaves empty is unchanged, not zero.
	ev, err = decodeFrame([]byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"markets_summary.kPEPE-USD-PERP",
		"data":{"symbol":"kPEPE-USD-PERP","mark_price":"0.0125","underlying_price":"","funding_rate":"","open_interest":""}}}`), now)
	if err != nil || ev.Market != "kPEPE-USD-PERP" || !ev.Mark.MarkPrice.Valid || ev.Mark.IndexPrice.Valid || ev.Funding.Rate.Valid {
		t.Fatalf("sparse summary %+v %v", ev, err)
	}
	ev, err = decodeFrame([]byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"order_book.BTC-USD-PERP.snapshot@15@100ms",
		"data":{"seq_no":14127815,"market":"BTC-USD-PERP","last_updated_at":1718267837265,"update_type":"s",
		"inserts":[{"side":"BUY","price":"67629.7","size":"0.992"},{"side":"SELL","price":"69378.6","size":"3.137"}],
		"updates":[],"deletes":[]}}}`), now)
	if err != nil {
		t.Fatal(err)
	}
	b := ev.Book
	if ev.Market != "BTC-USD-PERP" || b == nil || !b.Snapshot || b.Depth != 15 || b.Seq != 14127815 ||
		len(b.Bids) != 1 || len(b.Asks) != 1 || b.Bids[0][0].String() != "67629.7" || b.Bids[0][1].String() != "0.992" ||
		b.Asks[0][0].String() != "69378.6" || b.Asks[0][1].String() != "3.137" {
		t.Fatalf("book event %+v %+v", ev, b)
	}
	// A change (update_type "d", not known on the snapshot channel):
	// numbered by seq_no, deletes at size zero.
	ev, err = decodeFrame([]byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"order_book.BTC-USD-PERP.snapshot@15@100ms",
		"data":{"seq_no":7,"market":"BTC-USD-PERP","update_type":"d","inserts":[{"side":"BUY","price":"1","size":"2"}],
		"updates":[{"side":"SELL","price":"3","size":"4"}],"deletes":[{"side":"SELL","price":"5","size":"6"}]}}}`), now)
	if err != nil || ev.Book.Snapshot || ev.Book.First != 7 || ev.Book.Seq != 7 || len(ev.Book.Asks) != 2 || !ev.Book.Asks[1][1].IsZero() {
		t.Fatalf("change %+v %v", ev.Book, err)
	}
	for _, heartbeat := range []string{
		`{"jsonrpc":"2.0","result":{"channel":"markets_summary.BTC-USD-PERP"},"usIn":1682556415569005368,"usDiff":1291796,"id":1}`,
		`{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"},"id":2}`,
		`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"trades.BTC-USD-PERP","data":{}}}`,
	} {
		ev, err := decodeFrame([]byte(heartbeat), now)
		if err != nil || ev.Mark != nil || ev.Funding != nil || ev.Book != nil {
			t.Fatalf("%s: %+v %v", heartbeat, ev, err)
		}
	}
}

// TestParadexStreamIdleUnsubscribes: a read subscribes the market's two
// channels under Paradex's names; a market nobody reads is unsubscribed
// on the wire (the simulator errors on unsubscribing what is not
// subscribed, and lists what each socket holds).
func TestParadexStreamIdleUnsubscribes(t *testing.T) {
	f, r := streamFixture(t, sim.Config{}, connector.StreamConfig{Idle: 500 * time.Millisecond})
	r.MarkPrice(t, "1000PEPE")
	want := []string{"markets_summary.kPEPE-USD-PERP", "order_book.kPEPE-USD-PERP.snapshot@15@100ms"}
	connectortest.Eventually(t, 5*time.Second, "kPEPE's channels subscribed", func() bool {
		got := f.sim.StreamChannels()
		return len(got) == 2 && got[0] == want[0] && got[1] == want[1]
	})
	connectortest.Eventually(t, 5*time.Second, "the idle market unsubscribed", func() bool { return len(f.sim.StreamChannels()) == 0 })
}

// TestParadexStreamBinaryFrameEndsSocket: a binary frame (SBE, which
// Paradex announces for public channels) is not taken for JSON: Next
// ends the socket with an error naming SBE, so reads go to REST.
func TestParadexStreamBinaryFrameEndsSocket(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		_ = c.Write(r.Context(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","result":{"channel":"markets_summary.BTC-USD-PERP"},"id":1}`))
		_ = c.Write(r.Context(), websocket.MessageBinary, []byte{0x20, 0, 4, 0, 1, 0, 1, 0})
		_, _, _ = c.Read(r.Context())
	}))
	defer srv.Close()
	cfg := DefaultConfig()
	cfg.MainnetURL = srv.URL + "/v1"
	a := NewAdapter(cfg, srv.Client())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := a.DialStream(ctx, contract.Mainnet)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Next(ctx); err != nil || ev.Mark != nil || ev.Book != nil {
		t.Fatalf("the subscribe answer: %+v %v", ev, err)
	}
	if _, err := s.Next(ctx); err == nil || !strings.Contains(err.Error(), "SBE") {
		t.Fatalf("a binary frame gave %v", err)
	}
}

// TestParadexBookSnapshot: the REST book a change would resync from is
// the 15-level GET /orderbook/{market} with its seq_no.
func TestParadexBookSnapshot(t *testing.T) {
	f := newFixture(t, sim.Config{})
	u, err := f.a.BookSnapshot(context.Background(), contract.Mainnet, "BTC-USD-PERP", 100)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.sim.Engine().Orderbook("BTC-USD-PERP", 15)
	if err != nil {
		t.Fatal(err)
	}
	if !u.Snapshot || u.Depth != 15 || u.Seq == 0 || len(u.Bids) != 15 || len(u.Asks) != 15 ||
		!u.Bids[0][0].Equal(b.Bids[0].Price) || !u.Asks[14][1].Equal(b.Asks[14].Size) {
		t.Fatalf("snapshot %+v", u)
	}
}
