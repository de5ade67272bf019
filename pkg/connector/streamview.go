package connector

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// streamMsg is what the holder publishes: one market's changed part, or
// (no market) a beat saying whether the socket is up. At is the socket's
// last message or heartbeat, Unix ms, on the holder's clock. Socket names
// the socket (holder and dial): a market's data counts only while the
// socket it came on is the one beating, so after a reconnect or a handover
// nothing is served until the new socket has sent it. Drop: the market
// was unsubscribed.
type streamMsg struct {
	Market  string       `json:"market,omitempty"`
	At      int64        `json:"at"`
	Up      bool         `json:"up"`
	Socket  string       `json:"socket,omitempty"`
	Drop    bool         `json:"drop,omitempty"`
	Mark    *markPart    `json:"mark,omitempty"`
	Funding *fundingPart `json:"funding,omitempty"`
	Book    *bookPart    `json:"book,omitempty"`
}

type markPart struct {
	Mark  decimal.Decimal `json:"mark"`
	Index decimal.Decimal `json:"index"`
}

type fundingPart struct {
	Rate  decimal.Decimal     `json:"rate"`
	Next  int64               `json:"next"`
	OI    decimal.NullDecimal `json:"oi"`
	HasOI bool                `json:"hasOi"`
}

// bookPart is the top Depth levels per side; Synced false means the holder
// lost the book (gap, reconnect) and replicas must not answer from it.
type bookPart struct {
	Synced bool             `json:"synced"`
	Depth  int              `json:"depth"`
	Bids   []contract.Level `json:"bids"`
	Asks   []contract.Level `json:"asks"`
}

type viewMarket struct {
	socket  string
	mark    *markPart
	funding *fundingPart
	book    *bookPart
}

// view is one replica's copy of a network's market data.
type view struct {
	mu      sync.RWMutex
	at      int64 // last message or heartbeat on the holder's socket, Unix ms
	up      bool
	socket  string // the socket beating now
	markets map[string]*viewMarket
}

func newView() *view { return &view{markets: map[string]*viewMarket{}} }

// apply takes one holder message and returns its At (0 for a socket down).
func (v *view) apply(data []byte) int64 {
	var m streamMsg
	if json.Unmarshal(data, &m) != nil {
		return 0
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if !m.Up {
		v.up = false
		return 0
	}
	v.up = true
	if m.Socket != v.socket {
		v.socket, v.at = m.Socket, 0
	}
	if m.At > v.at {
		v.at = m.At
	}
	if m.Market == "" {
		return m.At
	}
	if m.Drop {
		delete(v.markets, m.Market)
		return m.At
	}
	vm := v.markets[m.Market]
	if vm == nil || vm.socket != m.Socket {
		vm = &viewMarket{socket: m.Socket}
		v.markets[m.Market] = vm
	}
	if m.Mark != nil {
		vm.mark = m.Mark
	}
	if m.Funding != nil {
		vm.funding = m.Funding
	}
	if m.Book != nil {
		vm.book = m.Book
	}
	return m.At
}

// fresh reports the socket's last beat when it is within bound of now.
// Caller holds v.mu.
func (v *view) fresh(now time.Time, bound time.Duration) (int64, bool) {
	if !v.up || v.at == 0 {
		return 0, false
	}
	return v.at, now.UnixMilli()-v.at <= bound.Milliseconds()
}

// current reports data that came on the socket beating now. Caller holds v.mu.
func (v *view) current(vm *viewMarket) bool { return vm != nil && vm.socket == v.socket }

func (v *view) markPrice(now time.Time, bound time.Duration, native string) (contract.MarkPriceResult, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	at, ok := v.fresh(now, bound)
	vm := v.markets[native]
	if !ok || !v.current(vm) || vm.mark == nil {
		return contract.MarkPriceResult{}, false
	}
	return contract.MarkPriceResult{MarkPrice: vm.mark.Mark, IndexPrice: vm.mark.Index, AsOf: at}, true
}

func (v *view) fundingRate(now time.Time, bound time.Duration, native string) (contract.FundingRateResult, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	at, ok := v.fresh(now, bound)
	vm := v.markets[native]
	if !ok || !v.current(vm) || vm.funding == nil {
		return contract.FundingRateResult{}, false
	}
	return contract.FundingRateResult{FundingRate: vm.funding.Rate, NextFundingTime: vm.funding.Next, AsOf: at}, true
}

// orderbook answers when the held book is synced and deep enough: it holds
// depth levels, or fewer because the whole book is shorter than its cap.
func (v *view) orderbook(now time.Time, bound time.Duration, native string, depth int) (contract.OrderbookResult, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	at, ok := v.fresh(now, bound)
	vm := v.markets[native]
	if !ok || !v.current(vm) || vm.book == nil || !vm.book.Synced || depth > vm.book.Depth {
		return contract.OrderbookResult{}, false
	}
	b := vm.book
	return contract.OrderbookResult{Bids: top(b.Bids, depth), Asks: top(b.Asks, depth), AsOf: at}, true
}

func top(levels []contract.Level, depth int) []contract.Level {
	out := make([]contract.Level, min(depth, len(levels)))
	copy(out, levels)
	return out
}

// marketsWithFunding answers only when every market has mark, funding and
// open interest in the view.
func (v *view) marketsWithFunding(now time.Time, bound time.Duration, list []Market) (contract.MarketsResult, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	at, ok := v.fresh(now, bound)
	if !ok {
		return contract.MarketsResult{}, false
	}
	out := contract.MarketsResult{Markets: make([]contract.MarketEntry, 0, len(list)), AsOf: at}
	for _, m := range list {
		vm := v.markets[m.Native]
		if !v.current(vm) || vm.mark == nil || vm.funding == nil || !vm.funding.HasOI {
			return contract.MarketsResult{}, false
		}
		out.Markets = append(out.Markets, contract.MarketEntry{Symbol: m.Native, MarkPrice: vm.mark.Mark,
			FundingRate: vm.funding.Rate, OpenInterest: &vm.funding.OI.Decimal})
	}
	return out, true
}
