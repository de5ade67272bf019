package aster

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/connectortest"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/connectors/aster/sim"
	"github.com/shopspring/decimal"
)

// TestAsterStreamMarkPrice: after the first getMarkPrice (REST), reads
// come from the one combined socket and follow the simulator's mark.
func TestAsterStreamMarkPrice(t *testing.T) {
	still := time.Now()
	f := newFixture(t, sim.Config{Now: func() time.Time { return still }})
	r := connectortest.Serve(t, f.a, connectortest.Options{URL: testenv.EmbeddedNATS(t).ClientURL(),
		Subjects: contract.NewSubjects(testenv.Prefix(t)), Env: contract.Mainnet, Secret: f.cred.Secret})
	r.MarkPrice(t, "BTC-USDT-PERP")
	connectortest.Eventually(t, 5*time.Second, "reads stop reaching REST", func() bool {
		before := f.sim.Hits("GET", "/fapi/v3/premiumIndex")
		r.MarkPrice(t, "BTC-USDT-PERP")
		return f.sim.Hits("GET", "/fapi/v3/premiumIndex") == before
	})
	want := decimal.RequireFromString("91234.5")
	if _, err := f.sim.Engine().SetMarkPrice("BTCUSDT", want); err != nil {
		t.Fatal(err)
	}
	connectortest.Eventually(t, 3*time.Second, "the new mark streams in", func() bool {
		return r.MarkPrice(t, "BTC-USDT-PERP").MarkPrice.Equal(want)
	})
	if d := f.sim.StreamDials(); d != 1 {
		t.Errorf("%d sockets, want 1", d)
	}
}

// events collects what FollowAccount emits.
type events struct {
	mu  sync.Mutex
	all []connector.AccountEvent
}

func (e *events) emit(ev connector.AccountEvent) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) find(match func(any) bool) (any, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.all {
		if match(ev.Data) {
			return ev.Data, true
		}
	}
	return nil, false
}

// TestFollowAccount: the listen-key stream gives the order, its fill,
// the position and the wallet balance of a market buy, field by field as
// the simulator holds them; a refused signer's feed ends with
// AUTHENTICATION_FAILED; an expired listen key ends the feed.
func TestFollowAccount(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got events
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- f.a.FollowAccount(ctx, f.cred, func() { close(ready) }, got.emit) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("feed ended before ready: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("not ready")
	}
	m := f.market(t, "BTCUSDT")
	res, err := f.a.PlaceMarketOrder(ctx, f.cred, connector.OrderRequest{Market: m, Type: connector.MarketType, Side: contract.Buy,
		Size: decimal.RequireFromString("0.01"), ClientOrderID: "feed-1"})
	if err != nil {
		t.Fatal(err)
	}
	acct := strings.ToLower(testUser)
	fills, _ := f.sim.Engine().Fills(acct, "BTCUSDT", 1)
	pos, _ := f.sim.Engine().Positions(acct, "BTCUSDT")
	bal, _ := f.sim.Engine().Balance(acct)
	connectortest.Eventually(t, 5*time.Second, "the fill, order, position and balance events", func() bool {
		fill, ok1 := got.find(func(d any) bool { x, ok := d.(contract.FillEvent); return ok && x.OrderID == res.OrderID })
		ord, ok2 := got.find(func(d any) bool {
			x, ok := d.(contract.OrderEvent)
			return ok && x.OrderID == res.OrderID && x.Status == contract.StatusFilled
		})
		p, ok3 := got.find(func(d any) bool { x, ok := d.(contract.PositionEvent); return ok && x.Market == "BTCUSDT" })
		b, ok4 := got.find(func(d any) bool { _, ok := d.(contract.BalanceEvent); return ok })
		if !(ok1 && ok2 && ok3 && ok4) {
			return false
		}
		fe, oe, pe, be := fill.(contract.FillEvent), ord.(contract.OrderEvent), p.(contract.PositionEvent), b.(contract.BalanceEvent)
		w := fills[0]
		if fe.FillID != w.ID || !fe.Size.Equal(w.Size) || !fe.Price.Equal(w.Price) || !fe.Fee.Equal(w.Fee) || fe.ClientOrderID != "feed-1" ||
			fe.Liquidity != "TAKER" || fe.Side != contract.Buy || fe.FeeAsset != "USDT" {
			t.Errorf("fill event %+v, simulator holds %+v", fe, w)
		}
		if !oe.FilledSize.Equal(w.Size) || oe.AvgPrice == nil || !oe.AvgPrice.Equal(w.Price) || oe.Type != "MARKET" {
			t.Errorf("order event %+v", oe)
		}
		if pe.Side != contract.Long || !pe.Size.Equal(pos[0].Size) || !pe.EntryPrice.Equal(pos[0].EntryPrice) {
			t.Errorf("position event %+v, simulator holds %+v", pe, pos[0])
		}
		if be.Asset != "USDT" || be.WalletBalance == nil || !be.WalletBalance.Equal(bal.Wallet) {
			t.Errorf("balance event %+v, simulator's wallet %s", be, bal.Wallet)
		}
		return true
	})
	f.sim.ExpireListenKeys()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("feed ended with %v after the key expired", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the feed did not end when its listen key expired")
	}

	err = f.a.FollowAccount(ctx, credential(contract.Mainnet, testUser, otherKey), func() { t.Error("ready for a refused signer") }, got.emit)
	if ce := testenv.WantUpstream(t, err, contract.ReasonAuthenticationFailed); ce.ExchangeCode != "-2015" {
		t.Errorf("refused signer: code %s", ce.ExchangeCode)
	}
}

// TestFollowAccountEndsWhenDropped: the venue closing the user data
// socket (sim DropPrivate, the 24 h limit) ends the feed with an error,
// so the runtime reconnects and reconciles.
func TestFollowAccountEndsWhenDropped(t *testing.T) {
	f := newFixture(t, sim.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got events
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- f.a.FollowAccount(ctx, f.cred, func() { close(ready) }, got.emit) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("feed ended before ready: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("not ready")
	}
	// ready comes once the dial returns; the simulator registers the socket
	// just after, and a drop before that would close nothing.
	connectortest.Eventually(t, 3*time.Second, "the simulator holds the socket", func() bool { return f.sim.PrivateOpen() == 1 })
	f.sim.DropPrivate()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the feed ended without an error when the venue dropped its socket")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the feed did not end when the venue dropped its socket")
	}
}
